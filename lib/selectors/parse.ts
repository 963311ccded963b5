/**
 * Label selector values (seed 002), one per label key:
 *
 *   value      := ["!"] (plain | call)
 *   plain      := a label value (may be empty)            v  →  IN [v]     !v  →  NOT_IN [v]
 *   call       := op "(" args ")"
 *   in(a,b)    →  IN [a,b]          !in(a,b)   →  NOT_IN [a,b]
 *   exists()   →  EXISTS            !exists()  →  DOES_NOT_EXIST
 *   gt(4)      →  GT [4]            lt(4)      →  LT [4]   (Kubernetes Gt/Lt; no '!')
 *
 * Several constraints on one key are a list of values, ANDed: `{ gpu: ['in(a,b,c)', '!b'] }`.
 * Operators are case-insensitive; whitespace around tokens and values is ignored. Keys may use the
 * reserved `orrery.io/` prefix. Every problem is an InvalidSelectorError carrying the key, the raw
 * value and the rule.
 */
import { InvalidSelectorError } from '../errors.ts';
import { labelKeyProblem, labelValueProblem, typeName } from '../labels/validate.ts';
import { isIntegerBound, validateExpression } from './builders.ts';
import type { Condition, LabelMatchExpression, MatchOperator } from './expression.ts';

const CALL = /^([A-Za-z]+)\s*\(([^]*)\)$/;
const SPECIAL = /[(),!]/;

type Parsed = { operator: MatchOperator; values: string[] } | { problem: string };

function valuesProblem(values: string[]): string | undefined {
  for (const v of values) {
    const problem = labelValueProblem(v);
    if (problem) return `value ${JSON.stringify(v)}: ${problem}`;
  }
  return undefined;
}

function parseCall(name: string, args: string, negated: boolean): Parsed {
  const op = `${negated ? '!' : ''}${name}()`;
  const trimmed = args.trim();
  switch (name) {
    case 'exists':
      if (trimmed !== '') return { problem: `${op} takes no values` };
      return { operator: negated ? 'DOES_NOT_EXIST' : 'EXISTS', values: [] };
    case 'in': {
      if (trimmed === '') return { problem: `${op} needs at least one value` };
      const values = args.split(',').map((v) => v.trim());
      if (values.includes('')) return { problem: `${op} has an empty value (a stray ',')` };
      const problem = valuesProblem(values);
      return problem ? { problem } : { operator: negated ? 'NOT_IN' : 'IN', values };
    }
    case 'gt':
    case 'lt':
      if (negated) return { problem: `${name}() cannot be negated with '!'` };
      if (!isIntegerBound(trimmed)) return { problem: `${op} needs one non-negative integer bound` };
      return { operator: name === 'gt' ? 'GT' : 'LT', values: [String(Number(trimmed))] };
    default:
      return { problem: `unknown operator ${JSON.stringify(name + '()')}; expected in(), exists(), gt() or lt()` };
  }
}

function parseBody(text: string): Parsed {
  const trimmed = text.trim();
  const negated = trimmed.startsWith('!');
  const body = negated ? trimmed.slice(1).trim() : trimmed;
  const call = CALL.exec(body);
  if (call) return parseCall(call[1].toLowerCase(), call[2], negated);
  const special = SPECIAL.exec(body);
  if (special) {
    return {
      problem: `a plain value may not contain '(', ')', ',' or '!' (found '${special[0]}'); list values with in(a,b)`,
    };
  }
  const problem = valuesProblem([body]);
  return problem ? { problem } : { operator: negated ? 'NOT_IN' : 'IN', values: [body] };
}

/** Parses one selector value for `key` into a hard (soft: false) expression. */
export function parseSelectorValue(key: string, value: unknown): LabelMatchExpression {
  const keyProblem = labelKeyProblem(key, { allowReserved: true });
  if (keyProblem) throw new InvalidSelectorError(typeof key === 'string' ? key : '', value, `key: ${keyProblem}`);
  if (typeof value !== 'string') {
    throw new InvalidSelectorError(key, value, `selector value must be a string (got ${typeName(value)})`);
  }
  const parsed = parseBody(value);
  if ('problem' in parsed) throw new InvalidSelectorError(key, value, parsed.problem);
  return validateExpression({ key, operator: parsed.operator, values: parsed.values, soft: false });
}

/**
 * A selector value per key, or a list of them for several constraints on one key (ANDed, as
 * Kubernetes' matchExpressions may repeat a key): `{ gpu: ['in(a,b)', '!b'] }`.
 */
export type SelectorValue = string | readonly string[];

/** Parses a whole `labelSelector` record; its expressions are ANDed, in the record's key order. */
export function parseLabelSelector(selector: unknown): LabelMatchExpression[] {
  if (typeof selector !== 'object' || selector === null || Array.isArray(selector)) {
    throw new InvalidSelectorError('', selector, `label selector must be an object mapping label keys to selector values (got ${typeName(selector)})`);
  }
  const out: LabelMatchExpression[] = [];
  for (const [key, value] of Object.entries(selector)) {
    if (!Array.isArray(value)) {
      out.push(parseSelectorValue(key, value));
      continue;
    }
    if (value.length === 0) throw new InvalidSelectorError(key, value, 'a list of selector values needs at least one value');
    for (const v of value) out.push(parseSelectorValue(key, v));
  }
  return out;
}

/** Writes a condition back in selector syntax: the inverse of parseSelectorValue. */
export function formatSelectorValue(cond: Condition): string {
  const list = cond.values.join(',');
  switch (cond.operator) {
    case 'IN':
      return cond.values.length === 1 ? cond.values[0] : `in(${list})`;
    case 'NOT_IN':
      return cond.values.length === 1 ? `!${cond.values[0]}` : `!in(${list})`;
    case 'EXISTS':
      return 'exists()';
    case 'DOES_NOT_EXIST':
      return '!exists()';
    case 'GT':
      return `gt(${list})`;
    case 'LT':
      return `lt(${list})`;
  }
}
