/**
 * Builders for label match expressions, conditions and scheduling strategies (seeds 000-002, in
 * camelCase). Every builder validates what it makes, and returns frozen plain data. Expressions
 * users write by hand are checked by validateExpression when they reach a strategy builder.
 * Conditions (In, NotIn, …) carry no key, so they are checked where a key meets them
 * (nodeLabelStrategy, validateCondition).
 */
import { InvalidOptionError, InvalidSelectorError } from '../errors.ts';
import { labelKeyProblem, labelValueProblem, typeName } from '../labels/validate.ts';
import { ACTOR_ID_LABEL } from '../labels/builtin.ts';
import type {
  ActorAffinityStrategy, NodeAffinityStrategy, NodeIdAffinityStrategy, NodeLabelStrategy, PlacementGroupStrategy,
} from '../scheduling/strategy.types.ts';
import { MatchOperator, type Condition, type LabelMatchExpression, type NodeAffinityTerm } from './expression.ts';
import { nodeAffinityTerms } from './terms.ts';

/** An actor handle (anything with an actorId, and maybe its namespace) or a bare actor id. */
export type ActorRefLike = string | { readonly actorId: string; readonly namespace?: string };

const OPERATORS = Object.values(MatchOperator) as string[];

/** A GT/LT bound: a non-negative integer written in digits (label values cannot start with '-'). */
export function isIntegerBound(v: unknown): v is string {
  return typeof v === 'string' && /^\d+$/.test(v) && Number.isSafeInteger(Number(v));
}

/** The first rule an operator and its values break, or undefined. */
export function conditionProblem(operator: unknown, values: unknown): string | undefined {
  if (typeof operator !== 'string' || !OPERATORS.includes(operator)) {
    return `unknown operator ${JSON.stringify(operator) ?? typeName(operator)}; expected one of ${OPERATORS.join(', ')}`;
  }
  if (!Array.isArray(values)) return `values must be an array of strings (got ${typeName(values)})`;
  switch (operator) {
    case 'IN':
    case 'NOT_IN':
      if (values.length === 0) return `${operator} needs at least one value`;
      for (const v of values) {
        const problem = labelValueProblem(v);
        if (problem) return `value ${JSON.stringify(v) ?? typeName(v)}: ${problem}`;
      }
      return undefined;
    case 'EXISTS':
    case 'DOES_NOT_EXIST':
      return values.length === 0 ? undefined : `${operator} takes no values`;
    default:
      if (values.length !== 1) return `${operator} needs exactly one value`;
      return isIntegerBound(values[0]) ? undefined : `${operator} bound must be a non-negative integer`;
  }
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function keyOf(x: unknown): string {
  return typeof x === 'string' ? x : '';
}

/** Checks a condition against a key (reserved keys allowed); returns a frozen copy. */
export function validateCondition(key: string, cond: unknown): Condition {
  const keyProblem = labelKeyProblem(key, { allowReserved: true });
  if (keyProblem) throw new InvalidSelectorError(keyOf(key), cond, `key: ${keyProblem}`);
  if (!isRecord(cond)) throw new InvalidSelectorError(key, cond, `condition must be an object {operator, values} (got ${typeName(cond)})`);
  const problem = conditionProblem(cond.operator, cond.values);
  if (problem) throw new InvalidSelectorError(key, cond, problem);
  return Object.freeze({ operator: cond.operator as MatchOperator, values: Object.freeze([...(cond.values as string[])]) });
}

/** A preferred term's weight: an integer 1-100 (Kubernetes), and only on a soft term. */
export function termWeightProblem(weight: unknown, soft: unknown): string | undefined {
  if (weight === undefined) return undefined;
  if (typeof weight !== 'number' || !Number.isInteger(weight) || weight < 1 || weight > 100) return `weight must be an integer from 1 to 100 (got ${JSON.stringify(weight) ?? typeName(weight)})`;
  return soft === true ? undefined : 'weight applies only to a soft (preferred) term';
}

/** Checks the shape of an expression (it may be built by hand); returns a frozen copy. */
export function validateExpression(expr: unknown): LabelMatchExpression {
  if (!isRecord(expr)) {
    throw new InvalidSelectorError('', expr, `expression must be an object {key, operator, values, soft} (got ${typeName(expr)})`);
  }
  const { key, soft = false, namespace, weight, topologyKey } = expr;
  const cond = validateCondition(key as string, expr);
  if (typeof soft !== 'boolean') throw new InvalidSelectorError(key as string, expr, 'soft must be a boolean');
  if (namespace !== undefined && (typeof namespace !== 'string' || namespace === '')) {
    throw new InvalidSelectorError(key as string, expr, 'namespace must be a non-empty string');
  }
  const weightProblem = termWeightProblem(weight, soft);
  if (weightProblem) throw new InvalidSelectorError(key as string, expr, weightProblem);
  if (topologyKey !== undefined) {
    const problem = labelKeyProblem(topologyKey, { allowReserved: true });
    if (problem) throw new InvalidSelectorError(key as string, expr, `topologyKey: ${problem}`);
  }
  const out = {
    key: key as string, ...cond, soft,
    ...(namespace === undefined ? {} : { namespace: namespace as string }),
    ...(weight === undefined ? {} : { weight: weight as number }),
    ...(topologyKey === undefined ? {} : { topologyKey: topologyKey as string }),
  };
  return Object.freeze(out);
}

export const labelIn = (key: string, values: string[], isSoft = false) =>
  validateExpression({ key, operator: 'IN', values, soft: isSoft });
export const labelNotIn = (key: string, values: string[], isSoft = false) =>
  validateExpression({ key, operator: 'NOT_IN', values, soft: isSoft });
export const labelExists = (key: string, isSoft = false) =>
  validateExpression({ key, operator: 'EXISTS', values: [], soft: isSoft });
export const labelDoesNotExist = (key: string, isSoft = false) =>
  validateExpression({ key, operator: 'DOES_NOT_EXIST', values: [], soft: isSoft });
/** The label is present and its integer value is greater than n (Kubernetes Gt). */
export const labelGt = (key: string, n: number, isSoft = false) =>
  validateExpression({ key, operator: 'GT', values: [String(n)], soft: isSoft });
/** The label is present and its integer value is less than n (Kubernetes Lt). */
export const labelLt = (key: string, n: number, isSoft = false) =>
  validateExpression({ key, operator: 'LT', values: [String(n)], soft: isSoft });

const condition = (operator: MatchOperator, values: string[]): Condition =>
  Object.freeze({ operator, values: Object.freeze(values) });

export const In = (...values: string[]) => condition('IN', values);
export const NotIn = (...values: string[]) => condition('NOT_IN', values);
export const Exists = () => condition('EXISTS', []);
export const DoesNotExist = () => condition('DOES_NOT_EXIST', []);
export const Gt = (n: number) => condition('GT', [String(n)]);
export const Lt = (n: number) => condition('LT', [String(n)]);

function actorIds(option: string, actors: ActorRefLike | ActorRefLike[]): { ids: string[]; namespace?: string } {
  const list: unknown[] = Array.isArray(actors) ? actors : [actors];
  if (list.length === 0) throw new InvalidOptionError(option, actors, 'needs at least one actor');
  const ids: string[] = [];
  const namespaces = new Set<string | undefined>();
  for (const ref of list) {
    const id = typeof ref === 'string' ? ref : isRecord(ref) ? ref.actorId : undefined;
    if (typeof id !== 'string' || id === '') {
      throw new InvalidOptionError(option, ref, 'each actor must be a non-empty actor id or a handle with one');
    }
    const ns = isRecord(ref) ? ref.namespace : undefined;
    if (ns !== undefined && (typeof ns !== 'string' || ns === '')) {
      throw new InvalidOptionError(option, ref, 'a handle namespace must be a non-empty string');
    }
    ids.push(id);
    namespaces.add(ns as string | undefined);
  }
  if (namespaces.size > 1) {
    const names = [...namespaces].map((n) => (n === undefined ? '(none)' : JSON.stringify(n)));
    throw new InvalidOptionError(option, actors, `all actors must share one namespace (got ${names.join(', ')})`);
  }
  const [namespace] = namespaces;
  return namespace === undefined ? { ids } : { ids, namespace };
}

/** Place next to (one of) these actors: their actor-id label IN the ids. */
export function affinity(actors: ActorRefLike | ActorRefLike[], isSoft = false): LabelMatchExpression {
  const { ids, namespace } = actorIds('affinity', actors);
  return validateExpression({ key: ACTOR_ID_LABEL, operator: 'IN', values: ids, soft: isSoft, namespace });
}

/** Keep away from these actors: their actor-id label NOT_IN the ids. */
export function antiAffinity(actors: ActorRefLike | ActorRefLike[], isSoft = false): LabelMatchExpression {
  const { ids, namespace } = actorIds('antiAffinity', actors);
  return validateExpression({ key: ACTOR_ID_LABEL, operator: 'NOT_IN', values: ids, soft: isSoft, namespace });
}

function expressionList(option: string, exprs: unknown): readonly LabelMatchExpression[] {
  const list: unknown[] = Array.isArray(exprs) ? exprs : [exprs];
  if (list.length === 0) throw new InvalidOptionError(option, exprs, 'needs at least one expression');
  return Object.freeze(list.map(validateExpression));
}

export function actorAffinity(exprs: LabelMatchExpression | LabelMatchExpression[]): ActorAffinityStrategy {
  return Object.freeze({ type: 'ACTOR_AFFINITY', expressions: expressionList('actorAffinity', exprs) });
}

/** Node-label expressions and anyOf(...) groups, ANDed (seed 001; Kubernetes' nodeSelectorTerms for OR). */
export function nodeAffinity(exprs: NodeAffinityTerm | NodeAffinityTerm[]): NodeAffinityStrategy {
  return Object.freeze({ type: 'NODE_AFFINITY', expressions: nodeAffinityTerms('nodeAffinity', exprs) });
}

export interface NodeIdAffinityOptions {
  soft?: boolean;
  spillOnUnavailable?: boolean;
  failOnUnavailable?: boolean;
}

export function nodeIdAffinity(nodeId: string, opts: NodeIdAffinityOptions = {}): NodeIdAffinityStrategy {
  if (typeof nodeId !== 'string' || nodeId === '') throw new InvalidOptionError('nodeId', nodeId, 'must be a non-empty string');
  const { soft = false, spillOnUnavailable = false, failOnUnavailable = false } = opts;
  for (const [name, v] of Object.entries({ soft, spillOnUnavailable, failOnUnavailable })) {
    if (typeof v !== 'boolean') throw new InvalidOptionError(name, v, 'must be a boolean');
  }
  if (spillOnUnavailable && !soft) {
    throw new InvalidOptionError('spillOnUnavailable', spillOnUnavailable, 'applies only to a soft affinity (soft: true)');
  }
  if (failOnUnavailable && soft) {
    throw new InvalidOptionError('failOnUnavailable', failOnUnavailable, 'applies only to a hard affinity (soft: false)');
  }
  return Object.freeze({ type: 'NODE_ID_AFFINITY', nodeId, soft, spillOnUnavailable, failOnUnavailable });
}

function conditionRecord(option: string, record: unknown): Readonly<Record<string, Condition>> {
  if (record === undefined) return Object.freeze({});
  if (!isRecord(record)) throw new InvalidOptionError(option, record, 'must be an object mapping label keys to conditions');
  const out: Record<string, Condition> = {};
  for (const [key, cond] of Object.entries(record)) out[key] = validateCondition(key, cond);
  return Object.freeze(out);
}

/** Ray's NodeLabelSchedulingStrategy: hard conditions filter nodes, soft ones rank them. */
export function nodeLabelStrategy(opts: {
  hard?: Record<string, Condition>;
  soft?: Record<string, Condition>;
}): NodeLabelStrategy {
  if (!isRecord(opts)) throw new InvalidOptionError('nodeLabelStrategy', opts, 'expects { hard?, soft? }');
  const hard = conditionRecord('nodeLabelStrategy.hard', opts.hard);
  const soft = conditionRecord('nodeLabelStrategy.soft', opts.soft);
  if (Object.keys(hard).length + Object.keys(soft).length === 0) {
    throw new InvalidOptionError('nodeLabelStrategy', opts, 'needs at least one hard or soft condition');
  }
  return Object.freeze({ type: 'NODE_LABEL', hard, soft });
}

/** Run inside a placement group: in bundle `bundleIndex`, or any bundle with room when -1. */
export function placementGroupStrategy(pg: { readonly id: string }, bundleIndex = -1): PlacementGroupStrategy {
  if (!isRecord(pg) || typeof pg.id !== 'string' || pg.id === '') {
    throw new InvalidOptionError('placementGroup', pg, 'must be a placement group (an object with a non-empty id)');
  }
  if (!Number.isInteger(bundleIndex) || bundleIndex < -1) {
    throw new InvalidOptionError('bundleIndex', bundleIndex, 'must be an integer, -1 (any bundle) or more');
  }
  return Object.freeze({ type: 'PLACEMENT_GROUP', placementGroupId: pg.id, bundleIndex });
}
