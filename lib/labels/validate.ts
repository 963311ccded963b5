/**
 * Kubernetes label syntax.
 *
 *   key    = [prefix "/"] name
 *   prefix = DNS-1123 subdomain, at most 253 characters: dot-separated parts of lowercase
 *            alphanumerics and '-', each part starting and ending alphanumeric
 *   name   = 1-63 characters: [A-Za-z0-9] at both ends, [-_.A-Za-z0-9] between
 *   value  = empty, or the same shape as a name
 *
 * The prefix `orrery.io` (and its subdomains) is reserved for built-in labels: user labels may not
 * use it, except the built-in labels that describe the machine and that only its operator knows
 * (SETTABLE_BUILTIN_LABELS: accelerator type, market type, node group, availability zone and
 * region — as `ray start --labels` sets `ray.io/accelerator-type`); selectors may use any (pass
 * `allowReserved`). The `*Problem` functions return the first rule a
 * key or value breaks (undefined when fine); the `validate*` functions throw it as an
 * InvalidLabelError.
 */
import { InvalidLabelError } from '../errors.ts';

export const RESERVED_LABEL_PREFIX = 'orrery.io';

export const LABEL_RULES = {
  keyNotString: 'key must be a string',
  keyEmpty: 'key must not be empty',
  keySlashes: "key must contain at most one '/' (prefix/name)",
  prefixEmpty: "prefix before '/' must not be empty",
  prefixLength: 'prefix must be 253 characters or less',
  prefixSyntax:
    "prefix must be a DNS subdomain: lowercase alphanumerics, '-' and '.', each dot-separated part starting and ending with an alphanumeric character",
  prefixReserved: `prefix ${RESERVED_LABEL_PREFIX}/ is reserved for built-in labels (users may set only orrery.io/accelerator-type, market-type, node-group, availability-zone and availability-region)`,
  nameEmpty: 'name must not be empty',
  nameLength: 'name must be 63 characters or less',
  nameEnds: 'name must start and end with an alphanumeric character',
  nameChars: "name may contain only alphanumerics, '-', '_' and '.'",
  valueLength: 'value must be 63 characters or less',
  valueEnds: 'value must start and end with an alphanumeric character',
  valueChars: "value may contain only alphanumerics, '-', '_' and '.'",
  notARecord: 'labels must be an object mapping keys to string values',
} as const;

/** Built-in labels an operator may set (with --labels, a labels file or ORRERY_NODE_LABELS). */
export const SETTABLE_BUILTIN_LABELS: ReadonlySet<string> = new Set([
  'orrery.io/accelerator-type',
  'orrery.io/market-type',
  'orrery.io/node-group',
  'orrery.io/availability-zone',
  'orrery.io/availability-region',
]);

export interface KeyOptions {
  /** Accept keys under the reserved `orrery.io/` prefix (selectors, built-in labels). */
  allowReserved?: boolean;
}

const ALNUM = /^[A-Za-z0-9]$/;
const NAME_CHARS = /^[-_.A-Za-z0-9]*$/;
const DNS_ALNUM = /^[a-z0-9]$/;
const DNS_CHARS = /^[-a-z0-9]*$/;

/** Is this prefix (the part before '/') reserved for built-in labels? */
export function isReservedPrefix(prefix: string): boolean {
  return prefix === RESERVED_LABEL_PREFIX || prefix.endsWith('.' + RESERVED_LABEL_PREFIX);
}

/** Names a value's type for a "must be a string" rule. */
export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function segmentProblem(text: string, what: 'name' | 'value'): string | undefined {
  const rules = what === 'name'
    ? { length: LABEL_RULES.nameLength, ends: LABEL_RULES.nameEnds, chars: LABEL_RULES.nameChars }
    : { length: LABEL_RULES.valueLength, ends: LABEL_RULES.valueEnds, chars: LABEL_RULES.valueChars };
  if (text.length > 63) return rules.length;
  if (!ALNUM.test(text[0]) || !ALNUM.test(text[text.length - 1])) return rules.ends;
  if (!NAME_CHARS.test(text)) return rules.chars;
  return undefined;
}

function prefixProblem(prefix: string): string | undefined {
  if (prefix === '') return LABEL_RULES.prefixEmpty;
  if (prefix.length > 253) return LABEL_RULES.prefixLength;
  for (const part of prefix.split('.')) {
    const ok = part !== '' && DNS_ALNUM.test(part[0]) && DNS_ALNUM.test(part[part.length - 1]) && DNS_CHARS.test(part);
    if (!ok) return LABEL_RULES.prefixSyntax;
  }
  return undefined;
}

/** The first rule the key breaks, or undefined. */
export function labelKeyProblem(key: unknown, opts: KeyOptions = {}): string | undefined {
  if (typeof key !== 'string') return `${LABEL_RULES.keyNotString} (got ${typeName(key)})`;
  if (key === '') return LABEL_RULES.keyEmpty;
  const parts = key.split('/');
  if (parts.length > 2) return LABEL_RULES.keySlashes;
  const name = parts[parts.length - 1];
  if (parts.length === 2) {
    const problem = prefixProblem(parts[0]);
    if (problem) return problem;
  }
  if (name === '') return LABEL_RULES.nameEmpty;
  const problem = segmentProblem(name, 'name');
  if (problem) return problem;
  if (parts.length === 2 && !opts.allowReserved && isReservedPrefix(parts[0]) && !SETTABLE_BUILTIN_LABELS.has(key)) return LABEL_RULES.prefixReserved;
  return undefined;
}

/** The first rule the value breaks, or undefined. The empty string is a valid value. */
export function labelValueProblem(value: unknown): string | undefined {
  if (typeof value !== 'string') return `value must be a string (got ${typeName(value)})`;
  return value === '' ? undefined : segmentProblem(value, 'value');
}

function keyText(key: unknown): string {
  return typeof key === 'string' ? key : `(${typeName(key)})`;
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return `(${typeName(value)})`;
  }
}

export function validateLabelKey(key: unknown, opts: KeyOptions = {}): string {
  const problem = labelKeyProblem(key, opts);
  if (problem) throw new InvalidLabelError(keyText(key), undefined, problem);
  return key as string;
}

export function validateLabelValue(key: string, value: unknown): string {
  const problem = labelValueProblem(value);
  if (problem) throw new InvalidLabelError(key, valueText(value), problem);
  return value as string;
}

/** Validates every key and value; returns a frozen copy holding only the own enumerable entries. */
export function validateLabels(record: unknown, opts: KeyOptions = {}): Readonly<Record<string, string>> {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new InvalidLabelError('', valueText(record), `${LABEL_RULES.notARecord} (got ${typeName(record)})`);
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) {
    validateLabelKey(key, opts);
    out[key] = validateLabelValue(key, value);
  }
  return Object.freeze(out);
}
