import type { BusMsg } from '../bus/bus.ts';
import { BusClosedError } from '../bus/errors.ts';
import { encodeReplyBatch, soloReplySubject } from '../../protocols/call-batch.ts';
import { encodeError } from '../../protocols/reply.ts';

/**
 * Answers made in one turn, sent together once its microtask queue has drained — for actor calls
 * (call-job.ts) and tasks (task-runner.ts). Calls and tasks finish through promise callbacks, so each
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

/** A reply_batch is sent once its replies hold this many bytes, well inside a NATS server's max_payload. */
const MAX_BATCH_REPLY_BYTES = 256 * 1024;

/**
 * The answers to one call_batch (protocols/call-batch.ts). Each call of the batch is a BusMsg of its
 * own, made by call(), whose respond() hands its reply here; the replies given in one turn leave
 * together as one reply_batch to the batch's reply subject, each under its call's token. A call is
 * answered exactly as it would be alone: only how the answer travels changes. A batch published
 * without a reply subject makes calls without one (nobody waits; nothing is answered).
 */
export class BatchAnswers {
  #tokens: string[] = [];
  #replies: Uint8Array[] = [];
  #bytes = 0;

  /** `publish` sends a reply alone to its call's own reply subject (protocols/call-batch.ts, soloReplySubject). */
  constructor(
    private readonly batch: BusMsg,
    private readonly publish?: (subject: string, data: Uint8Array) => void,
  ) {}

  call(token: string, data: Uint8Array): BusMsg {
    const reply = this.batch.reply === undefined ? undefined : token;
    return {
      subject: this.batch.subject,
      data,
      reply,
      respond: (answer) => {
        if (reply === undefined) return false;
        this.#add(token, answer);
        return true;
      },
    };
  }

  #add(token: string, reply: Uint8Array): void {
    if (this.#bytes > 0 && this.#bytes + reply.byteLength > MAX_BATCH_REPLY_BYTES) this.#flush();
    this.#tokens.push(token);
    this.#replies.push(reply);
    this.#bytes += reply.byteLength;
    if (this.#tokens.length === 1) queueMicrotask(this.#flush);
  }

  readonly #flush = (): void => {
    if (this.#tokens.length === 0) return;
    const tokens = this.#tokens;
    const replies = this.#replies;
    this.#tokens = [];
    this.#replies = [];
    this.#bytes = 0;
    this.#send(tokens, replies);
  };

  /**
   * One reply_batch. One that cannot be sent (a reply close to the size limit: the batch's few
   * bytes more take it over) goes again one reply at a time. A reply too large even for a
   * reply_batch of its own goes alone, as the plain reply it is, to its call's own reply subject;
   * one that cannot go that way either is answered with the error, so no call waits out its
   * timeout for an answer that was made.
   */
  #send(tokens: string[], replies: Uint8Array[]): void {
    try {
      this.batch.respond(encodeReplyBatch(tokens, replies));
      return;
    } catch (err) {
      if (err instanceof BusClosedError) return; // nobody is left to answer
      if (tokens.length === 1) return this.#alone(tokens[0]!, replies[0]!, err);
    }
    for (let i = 0; i < tokens.length; i++) this.#send([tokens[i]!], [replies[i]!]);
  }

  /** A reply that no reply_batch can carry: alone to its call's subject, or else `err` in its place. */
  #alone(token: string, reply: Uint8Array, err: unknown): void {
    const solo = this.publish && this.batch.reply !== undefined ? soloReplySubject(this.batch.reply, token) : undefined;
    if (solo !== undefined) {
      try {
        this.publish!(solo, reply);
        return;
      } catch (failure) {
        if (failure instanceof BusClosedError) return;
        err = failure;
      }
    }
    try {
      this.batch.respond(encodeReplyBatch([token], [encodeError(err)]));
    } catch {
      // the bus closed under us
    }
  }
}
