import type { WireError, WireResult } from '../errors.ts';
import { childPath, invalid, isPlainObject, literal, object, optional, record, str, unknown, type Validator } from '../validate.ts';

export const wireError: Validator<WireError> = object({
  code: str({ min: 1, max: 64 }),
  message: str({ max: 4096 }),
  detail: optional(record(unknown())),
});

const success = object({ ok: literal(true), value: unknown() });
const failure = object({ ok: literal(false), error: wireError });

/** The answer to any request: `{ ok: true, value }` or `{ ok: false, error }`; `value` is checked by the caller. */
export const reply: Validator<WireResult<unknown>> = (value, path) => {
  if (!isPlainObject(value)) return invalid(path, 'expected an object');
  if (typeof value.ok !== 'boolean') return invalid(childPath(path, 'ok'), 'expected a boolean');
  return value.ok === true ? (success(value, path) as WireResult<unknown>) : failure(value, path);
};
