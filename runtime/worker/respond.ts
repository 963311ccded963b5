import type { BusMsg } from '../bus/bus.ts';
import { encodeError } from '../../protocols/reply.ts';

/**
 * Answers a request: `make` builds the reply bytes; when it throws (a value msgpack cannot carry,
 * a reply over the size limit) the answer is that error instead. A message without a reply subject,
 * or a bus that closed meanwhile, gets nothing.
 */
export function respond(msg: BusMsg, make: () => Uint8Array): void {
  if (msg.reply === undefined) return;
  const data = replyBytes(make);
  try {
    msg.respond(data);
  } catch {
    // the bus closed under us: nobody is left to answer
  }
}

/** The bytes `make` builds, or — when it throws (a value msgpack cannot carry, a reply over the size limit) — that error encoded as the reply. */
export function replyBytes(make: () => Uint8Array): Uint8Array {
  try {
    return make();
  } catch (err) {
    return encodeError(err);
  }
}
