import { timingSafeEqual } from 'node:crypto';
import { OrreryError } from '../../lib/errors.ts';
import { encodeError } from '../../protocols/reply.ts';

/**
 * Whether a cancel_task's key is the one its task was submitted with (protocols/messages/task.ts,
 * `cancelKey`). A task submitted without one cannot be cancelled. Both keys were validated as 32 hex
 * characters; compared in constant time, as a secret is.
 */
export function cancelKeyMatches(submitted: string | undefined, given: string): boolean {
  if (submitted === undefined || submitted.length !== given.length) return false;
  return timingSafeEqual(Buffer.from(submitted), Buffer.from(given));
}

/** The answer to a submission (or a push to a lease) that its driver cancelled before it started. */
export function encodeCancelled(taskId: string): Uint8Array {
  return encodeError(new OrreryError('ABORTED', `task ${taskId} was cancelled by its driver before it started; it did not run`, { detail: { taskId } }));
}
