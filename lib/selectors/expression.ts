/**
 * A label match expression: the one shape behind label selectors (seed 002), node affinity
 * (seed 001), actor affinity (seed 000), node-label conditions and tolerations (seed 003).
 *
 *   IN             the key is present with one of `values`
 *   NOT_IN         the key is absent, or present with none of `values`
 *   EXISTS         the key is present (any value)
 *   DOES_NOT_EXIST the key is absent
 *   GT / LT        the key is present and its value, an integer, is greater / less than values[0]
 *
 * Expressions in a list are ANDed; the values inside one expression are ORed.
 */
export const MatchOperator = {
  IN: 'IN',
  NOT_IN: 'NOT_IN',
  EXISTS: 'EXISTS',
  DOES_NOT_EXIST: 'DOES_NOT_EXIST',
  GT: 'GT',
  LT: 'LT',
} as const;
export type MatchOperator = (typeof MatchOperator)[keyof typeof MatchOperator];

/** A condition on one label's value, keyed elsewhere (`{ gpu_type: In('A100') }`). */
export interface Condition {
  readonly operator: MatchOperator;
  readonly values: readonly string[];
}

export interface LabelMatchExpression extends Condition {
  readonly key: string;
  /** Soft expressions are preferences: a node that misses them is still acceptable. */
  readonly soft: boolean;
  /**
   * Actor affinity only: the namespace whose actor labels are matched. Absent means the
   * requester's own namespace (as Kubernetes pod affinity defaults to the pod's namespace).
   */
  readonly namespace?: string;
  /**
   * Soft expressions only: how much meeting it counts, 1-100 (Kubernetes' preferred-term weight).
   * Absent means 1. A node's soft score is the sum of the weights of the soft terms it meets.
   */
  readonly weight?: number;
  /**
   * Actor affinity only: a node label naming a topology domain (Kubernetes' topologyKey, e.g.
   * `zone`). Affinity then holds on a node whose domain (same value of that label) has a matching
   * actor; anti-affinity holds when no node of its domain has one.
   */
  readonly topologyKey?: string;
}

/**
 * OR'ed node-affinity terms (Kubernetes' nodeSelectorTerms): the node must meet every expression of
 * at least one term. As a whole it is hard, or soft with a weight (a preferred term).
 */
export interface LabelMatchAnyOf {
  readonly anyOf: readonly (readonly LabelMatchExpression[])[];
  readonly soft: boolean;
  readonly weight?: number;
}

/** What nodeAffinity(...) takes: expressions and OR groups, ANDed. */
export type NodeAffinityTerm = LabelMatchExpression | LabelMatchAnyOf;

export const isAnyOf = (t: NodeAffinityTerm): t is LabelMatchAnyOf => Object.hasOwn(t, 'anyOf');

/** Does the node's label map meet some term of the group? */
export function anyOfMatches(group: LabelMatchAnyOf, labels: Readonly<Record<string, string>>): boolean {
  return group.anyOf.some((term) => term.every((e) => expressionMatches(e, labels)));
}

/** `(gpu in (a100)) or (gpu in (h100), nvlink exists)`: the OR group as explanations show it. */
export function describeAnyOf(group: LabelMatchAnyOf): string {
  return group.anyOf.map((term) => `(${term.map(describeExpression).join(', ')})`).join(' or ');
}

/** Does a label value (undefined when the key is absent) satisfy the condition? */
export function conditionMatches(cond: Condition, value: string | undefined): boolean {
  switch (cond.operator) {
    case 'IN':
      return value !== undefined && cond.values.includes(value);
    case 'NOT_IN':
      return value === undefined || !cond.values.includes(value);
    case 'EXISTS':
      return value !== undefined;
    case 'DOES_NOT_EXIST':
      return value === undefined;
    case 'GT':
    case 'LT': {
      if (value === undefined || !/^-?\d+$/.test(value)) return false;
      const have = Number(value);
      const bound = Number(cond.values[0]);
      return cond.operator === 'GT' ? have > bound : have < bound;
    }
  }
}

/** Does a flat label map satisfy the expression? */
export function expressionMatches(expr: LabelMatchExpression, labels: Readonly<Record<string, string>>): boolean {
  return conditionMatches(expr, Object.hasOwn(labels, expr.key) ? labels[expr.key] : undefined);
}

/**
 * Renders an expression the way explanations show it, Kubernetes style:
 * `region in (us,eu)`, `region notin (us)`, `gpu exists`, `gpu does not exist`, `cores gt 4`; with a
 * topology key, `app in (web) in the same zone`.
 */
export function describeExpression(expr: Pick<LabelMatchExpression, 'key' | 'operator' | 'values' | 'topologyKey'>): string {
  const plain = describeCondition(expr);
  return expr.topologyKey === undefined ? plain : `${plain} in the same ${expr.topologyKey}`;
}

function describeCondition(expr: Pick<LabelMatchExpression, 'key' | 'operator' | 'values'>): string {
  switch (expr.operator) {
    case 'IN':
      return `${expr.key} in (${expr.values.join(',')})`;
    case 'NOT_IN':
      return `${expr.key} notin (${expr.values.join(',')})`;
    case 'EXISTS':
      return `${expr.key} exists`;
    case 'DOES_NOT_EXIST':
      return `${expr.key} does not exist`;
    case 'GT':
      return `${expr.key} gt ${expr.values[0]}`;
    case 'LT':
      return `${expr.key} lt ${expr.values[0]}`;
  }
}
