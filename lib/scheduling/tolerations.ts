import { InvalidOptionError, InvalidSelectorError } from '../errors.ts';
import { typeName, validateLabelKey } from '../labels/validate.ts';
import { validateCondition } from '../selectors/builders.ts';
import type { Condition } from '../selectors/expression.ts';
import { ANY_TAINT, TaintEffect, type Toleration } from './taints.ts';

/**
 * The `tolerations` option (seed 003, with Kubernetes' effect and wildcard): a record of taint key
 * to a condition on the taint's value, optionally limited to one effect.
 *
 *   { gpu: Exists() }                               every gpu taint, whatever its effect
 *   { gpu: tolerate(Exists(), 'NoSchedule') }       gpu NoSchedule only: a gpu NoExecute still evicts
 *   { [ANY_TAINT]: Exists() }                       every taint (Kubernetes: empty key, Exists)
 *   { [ANY_TAINT]: tolerate(Exists(), 'NoExecute') } every NoExecute taint
 */
const EFFECTS = Object.values(TaintEffect) as string[];

/** A toleration limited to one taint effect (absent: every effect). */
export function tolerate(condition: Condition, effect?: TaintEffect): Toleration {
  if (effect !== undefined && !EFFECTS.includes(effect)) {
    throw new InvalidOptionError('effect', effect, `expected one of ${EFFECTS.join(', ')}`);
  }
  return Object.freeze({ ...condition, ...(effect === undefined ? {} : { effect }) });
}

/** Checks one toleration for `key`; returns a frozen copy. Errors name `option` and the key. */
export function validateToleration(option: string, key: string, value: unknown): Toleration {
  if (key !== ANY_TAINT) validateLabelKey(key, { allowReserved: true });
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidSelectorError(key, value, `condition must be an object {operator, values} (got ${typeName(value)})`);
  }
  const { effect, operator, values, ...rest } = value as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length) throw new InvalidOptionError(`${option}.${key}.${extra[0]}`, rest[extra[0]], 'unknown toleration field; expected operator, values, effect');
  if (effect !== undefined && (typeof effect !== 'string' || !EFFECTS.includes(effect))) {
    throw new InvalidOptionError(`${option}.${key}.effect`, effect, `expected one of ${EFFECTS.join(', ')} (or no effect: all of them)`);
  }
  if (key === ANY_TAINT) {
    if (operator !== 'EXISTS') throw new InvalidSelectorError(key, value, 'the wildcard toleration (empty key) needs operator EXISTS, as Kubernetes');
    if (!Array.isArray(values) || values.length > 0) throw new InvalidSelectorError(key, value, 'EXISTS takes no values');
    return Object.freeze({ operator: 'EXISTS', values: Object.freeze([]), ...(effect === undefined ? {} : { effect: effect as TaintEffect }) });
  }
  const cond = validateCondition(key, { operator, values });
  return Object.freeze({ ...cond, ...(effect === undefined ? {} : { effect: effect as TaintEffect }) });
}

/** Checks a whole tolerations record. */
export function compileTolerations(option: string, tolerations: unknown): Record<string, Toleration> {
  if (tolerations === undefined) return {};
  if (tolerations === null || typeof tolerations !== 'object' || Array.isArray(tolerations)) {
    throw new InvalidOptionError(option, tolerations, 'expected an object of taint key to condition, e.g. { gpu_node: Exists() }');
  }
  const out: Record<string, Toleration> = {};
  for (const [key, cond] of Object.entries(tolerations)) out[key] = validateToleration(option, key, cond);
  return out;
}
