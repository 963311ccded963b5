import { CALL_BATCH_CODEC } from '../../protocols/call-batch.ts';
import type { BatchRequest, Bus, RequestCallback } from '../bus/bus.ts';

/** The most calls one batch carries (protocols/messages/actor.ts allows up to 1,024). */
const MAX_CALLS = 256;
/** A batch leaves once its calls hold this many bytes, well inside a NATS server's max_payload (1 MiB by default). */
const MAX_BYTES = 64 * 1024;
/** A call this large goes alone: batching it saves nothing worth its copy. */
const MAX_CALL_BYTES = 16 * 1024;

/**
 * A handle's calls on their way to its actor: the calls a handle makes in one turn wait until the
 * turn's promise callbacks have run (process.nextTick runs once the microtask queue is empty) and
 * leave together — one alone as the plain actor_call it is, several as one call_batch
 * (protocols/call-batch.ts). A caller that waits for each answer loses nothing: its call still
 * leaves in the turn it was made, a few microseconds later, with the same bytes. A pipeline gains
 * most: its answers arrive together, each starts the next call, and those calls leave as one
 * message. Sending the first call of each turn at once instead cost a third of the throughput with
 * 64 calls in flight: its answer came back alone, and each process woke for it once more per turn
 * (docs/benchmarks.md, "Calls of one turn in one message"). Order is kept: calls leave in the order
 * they were made. On a bus without requestBatch (the memory bus) every call leaves alone, at once.
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

  /** Sends what waits now, before something that must not overtake it (a cancel_call). */
  flush(): void {
    this.#flush();
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
