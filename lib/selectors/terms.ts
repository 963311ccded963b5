/**
 * Builders for the node-affinity and actor-affinity forms Kubernetes users look for, beside seed
 * 001's ANDed expressions:
 *
 *   anyOf([a, b], [c])          OR'ed terms, each an AND of expressions (nodeSelectorTerms)
 *   preferred(term, 80)         a soft term with a weight 1-100 (preferredDuringScheduling…)
 *   withTopologyKey(expr, 'zone')  an actor-affinity expression over a topology domain (topologyKey)
 */
import { InvalidOptionError, InvalidSelectorError } from '../errors.ts';
import { typeName } from '../labels/validate.ts';
import { termWeightProblem, validateExpression } from './builders.ts';
import type { LabelMatchAnyOf, LabelMatchExpression, NodeAffinityTerm } from './expression.ts';

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Checks an OR group (it may be built by hand); returns a frozen copy. */
export function validateAnyOf(group: unknown): LabelMatchAnyOf {
  if (!isRecord(group) || !Array.isArray(group.anyOf) || group.anyOf.length === 0) {
    throw new InvalidOptionError('anyOf', group, 'needs at least one term (a non-empty list of expressions)');
  }
  const { anyOf, soft = false, weight, ...rest } = group;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) throw new InvalidOptionError(`anyOf.${extra}`, rest[extra], 'unknown field; expected anyOf, soft, weight');
  if (typeof soft !== 'boolean') throw new InvalidOptionError('anyOf.soft', soft, 'must be a boolean');
  const weightProblem = termWeightProblem(weight, soft);
  if (weightProblem) throw new InvalidOptionError('anyOf.weight', weight, weightProblem);
  const terms = (anyOf as unknown[]).map((term, i) => {
    if (!Array.isArray(term) || term.length === 0) throw new InvalidOptionError(`anyOf[${i}]`, term, `a term is a non-empty list of expressions (got ${typeName(term)})`);
    return Object.freeze(term.map((e) => {
      const expr = validateExpression(e);
      if (expr.soft || expr.weight !== undefined) throw new InvalidSelectorError(expr.key, e, 'expressions inside anyOf are hard; make the whole group preferred instead');
      if (expr.namespace !== undefined || expr.topologyKey !== undefined) throw new InvalidSelectorError(expr.key, e, 'namespace and topologyKey apply only to actor affinity');
      return expr;
    }));
  });
  return Object.freeze({ anyOf: Object.freeze(terms), soft, ...(weight === undefined ? {} : { weight: weight as number }) });
}

/** The node meets every expression of at least one term: `anyOf([labelIn('gpu', ['a100'])], [labelIn('gpu', ['h100']), labelExists('nvlink')])`. */
export function anyOf(...terms: LabelMatchExpression[][]): LabelMatchAnyOf {
  return validateAnyOf({ anyOf: terms, soft: false });
}

/** A soft copy of an expression or an OR group, weighing `weight` (1-100, default 1) in the soft score. */
export function preferred<T extends NodeAffinityTerm>(term: T, weight = 1): T {
  if (isRecord(term) && Object.hasOwn(term, 'anyOf')) return validateAnyOf({ ...term, soft: true, weight }) as T;
  return validateExpression({ ...term, soft: true, weight }) as T;
}

/** An actor-affinity expression over a topology domain: the nodes sharing the node label `topologyKey`'s value. */
export function withTopologyKey(expr: LabelMatchExpression, topologyKey: string): LabelMatchExpression {
  return validateExpression({ ...expr, topologyKey });
}

/** A nodeAffinity list: expressions (no namespace, no topologyKey) and OR groups. */
export function nodeAffinityTerms(option: string, exprs: unknown): readonly NodeAffinityTerm[] {
  const list: unknown[] = Array.isArray(exprs) ? exprs : [exprs];
  if (list.length === 0) throw new InvalidOptionError(option, exprs, 'needs at least one expression');
  return Object.freeze(list.map((e) => {
    if (isRecord(e) && Object.hasOwn(e, 'anyOf')) return validateAnyOf(e);
    const expr = validateExpression(e);
    if (expr.namespace !== undefined) throw new InvalidSelectorError(expr.key, expr, 'namespace applies only to actor affinity');
    if (expr.topologyKey !== undefined) throw new InvalidSelectorError(expr.key, expr, 'topologyKey applies only to actor affinity');
    return expr;
  }));
}
