import { CALL_BATCH_CODEC } from '../../protocols/call-batch.ts';
import type { BatchRequest, Bus, RequestCallback } from '../bus/bus.ts';

/** The most calls one batch carries (protocols/messages/actor.ts allows up to 1,024). */
const MAX_CALLS = 256;
/** A batch leaves once its calls hold this many bytes, well inside a NATS server's max_payload (1 MiB by default). */
const MAX_BYTES = 64 * 1024;
/** A call this large goes alone: batching it saves nothing worth its copy. */
const MAX_CALL_BYTES = 16 * 1024;

/**
 * A handle's calls on their way to its actor: the first call of a turn leaves at once, so a caller
 * that waits for each answer before its next call pays nothing for batching; calls the handle
 * makes after it in the same turn — the answers of a pipeline arrive together, and each starts the
 * next call — wait until the turn's promise callbacks have run (process.nextTick runs once the
 * microtask queue is empty) and leave together, as one call_batch (protocols/call-batch.ts) when
 * there are several. Order is kept: calls leave in the order they were made. On a bus without
 * requestBatch (the memory bus) every call leaves alone, at once.
 */
export class CallOutbox {
  #open = false;
  #subject = '';
  #queue: BatchRequest[] = [];
  #bytes = 0;

  constructor(private readonly bus: Bus) {}

  send(subject: string, data: Uint8Array, timeoutMs: number, done: RequestCallback): void {
    const { bus } = this;
    if (bus.requestBatch === undefined) return bus.requestCallback(subject, data, { timeoutMs }, done);
    if (!this.#open) {
      this.#open = true;
      queueMicrotask(this.#closeSoon);
      return bus.requestCallback(subject, data, { timeoutMs }, done);
    }
    if (this.#queue.length > 0 && subject !== this.#subject) this.#flush();
    if (data.byteLength > MAX_CALL_BYTES) {
      this.#flush(); // what waits leaves first: calls leave in the order they were made
      return bus.requestCallback(subject, data, { timeoutMs }, done);
    }
    this.#subject = subject;
    this.#queue.push({ data, timeoutMs, done });
    this.#bytes += data.byteLength;
    if (this.#queue.length >= MAX_CALLS || this.#bytes >= MAX_BYTES) this.#flush();
  }

  readonly #closeSoon = (): void => void process.nextTick(this.#close);
  readonly #close = (): void => {
    this.#flush();
    this.#open = false;
  };

  #flush(): void {
    const queue = this.#queue;
    if (queue.length === 0) return;
    this.#queue = [];
    this.#bytes = 0;
    if (queue.length === 1) this.bus.requestCallback(this.#subject, queue[0]!.data, { timeoutMs: queue[0]!.timeoutMs }, queue[0]!.done);
    else this.bus.requestBatch!(this.#subject, queue, CALL_BATCH_CODEC);
  }
}
