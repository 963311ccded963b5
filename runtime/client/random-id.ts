import { randomFillSync } from 'node:crypto';

/**
 * Random bytes for the ids a client makes (actors, placement groups, tasks), drawn 4 KiB at a time:
 * a randomBytes() call per id cost ~12 µs of a driver creating actors (4% of it, bench:e2e
 * --creation) and 4% of one creating groups (bench:pg); a copy out of the pool costs well under 1 µs.
 */
const POOL = Buffer.alloc(8 * 512);
let at = POOL.length;

/** A fresh id: 8 random bytes as 16 lowercase hex characters (a valid subject token). */
export function newRandomId(): string {
  if (at === POOL.length) {
    randomFillSync(POOL);
    at = 0;
  }
  at += 8;
  return POOL.toString('hex', at - 8, at);
}

/**
 * What a call made with a signal carries (protocols/messages/actor.ts): an id and a key, each 16
 * random bytes as 32 lowercase hex characters, drawn from the pool in one piece.
 */
export function newCallCancel(): { callId: string; cancelKey: string } {
  if (at + 32 > POOL.length) {
    randomFillSync(POOL);
    at = 0;
  }
  at += 32;
  const hex = POOL.toString('hex', at - 32, at);
  return { callId: hex.slice(0, 32), cancelKey: hex.slice(32) };
}
