import type { PlainDataProblem } from '../../protocols/plain-data.ts';
import { RemoteError } from '../errors.ts';

/** A wire error's message holds at most 4,096 characters (protocols/messages/reply.ts). */
const MAX_MESSAGE = 4000;
const MAX_STACK = 16_000;

/**
 * What an actor threw, as the RemoteError its caller receives: the remote name, message and stack.
 * Thrown non-errors (`throw 'no'`) become name 'Error' with their text as the message.
 */
export function toRemoteError(thrown: unknown): RemoteError {
  if (thrown instanceof RemoteError) return thrown;
  if (thrown instanceof Error) {
    const name = typeof thrown.name === 'string' && thrown.name !== '' ? thrown.name : 'Error';
    const stack = typeof thrown.stack === 'string' ? clip(thrown.stack, MAX_STACK) : undefined;
    return new RemoteError({ name, message: clip(String(thrown.message), MAX_MESSAGE), stack });
  }
  return new RemoteError({ name: 'Error', message: clip(text(thrown), MAX_MESSAGE) });
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function clip(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/** A method's or a task's result that cannot be sent (protocols/plain-data.ts), as its caller receives it. */
export function unsendableResult(who: string, problem: PlainDataProblem): RemoteError {
  const where = problem.path ? ` at ${problem.path}` : '';
  return new RemoteError({ name: 'TypeError', message: `${who} returned a value that cannot be sent${where}: ${problem.problem}` });
}
