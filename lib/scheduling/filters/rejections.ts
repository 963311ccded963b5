import { describeExpression, type LabelMatchExpression } from '../../selectors/expression.ts';
import type { Rejection } from './filter.ts';

/**
 * Rejections for expression filters, made once per (phrase, expression) and reused: a request's
 * expressions are immutable, and the hot path rejects the same expression on many nodes, so the
 * reason string is built once instead of on every failed check.
 */
const cache = new Map<string, WeakMap<LabelMatchExpression, Rejection>>();

export function expressionRejection(phrase: string, code: Rejection['code'], expr: LabelMatchExpression): Rejection {
  let byExpr = cache.get(phrase);
  if (!byExpr) cache.set(phrase, (byExpr = new WeakMap()));
  let r = byExpr.get(expr);
  if (!r) byExpr.set(expr, (r = { code, reason: `${phrase} ${describeExpression(expr)}` }));
  return r;
}
