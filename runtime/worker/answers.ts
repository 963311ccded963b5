import type { BusMsg } from '../bus/bus.ts';

/**
 * Answers made in one turn, sent together once its microtask queue has drained — for actor calls
 * (host.ts) and tasks (task-runner.ts). Calls and tasks finish through promise callbacks, so each
 * answer came a microtask after nats.js had already written the previous one: one socket write per
 * answer, and a peer that reads one answer per read and so sends one request per write — a convoy
 * that never batches again. Gathered, the answers of one turn leave in one write. A plain-valued
 * method is answered synchronously, before the promise callbacks of the same turn run, so the flush
 * is queued as a microtask that queues a process.nextTick: Node runs next-ticks only once the
 * microtask queue is empty, so sync and async answers of a turn still leave together. Each answer
 * is encoded when it is made; only the sending waits, and not past this turn.
 */
export class Answers {
  /** The request to answer (msg.respond), or a reply subject to publish to. */
  #to: (BusMsg | string)[] = [];
  #data: Uint8Array[] = [];
  readonly #flushSoon = (): void => process.nextTick(this.#flush);
  readonly #flush = (): void => {
    const to = this.#to;
    const data = this.#data;
    this.#to = [];
    this.#data = [];
    for (let i = 0; i < to.length; i++) {
      const target = to[i]!;
      try {
        if (typeof target === 'string') this.publish?.(target, data[i]!);
        else target.respond(data[i]!);
      } catch {
        // the bus closed under us: nobody is left to answer
      }
    }
  };

  /** `publish` sends to a reply subject given as a string; without it only BusMsg targets are taken. */
  constructor(private readonly publish?: (subject: string, data: Uint8Array) => void) {}

  send(to: BusMsg | string, data: Uint8Array): void {
    if (typeof to !== 'string' && to.reply === undefined) return;
    this.#to.push(to);
    this.#data.push(data);
    if (this.#to.length === 1) queueMicrotask(this.#flushSoon);
  }
}
