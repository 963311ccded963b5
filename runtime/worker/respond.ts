import type { BusMsg } from '../bus/bus.ts';
import { encodeError } from '../../protocols/reply.ts';

/**
 * Answers a request: `make` builds the reply bytes; when it throws (a value msgpack cannot carry,
 * a reply over the size limit) the answer is that error instead. A message without a reply subject,
 * or a bus that closed meanwhile, gets nothing.
 */
export function respond(msg: BusMsg, make: () => Uint8Array): void {
  if (msg.reply === undefined) return;
  let data: Uint8Array;
  try {
    data = make();
  } catch (err) {
    data = encodeError(err);
  }
  try {
    msg.respond(data);
  } catch {
    // the bus closed under us: nobody is left to answer
  }
}
