/**
 * Node labels from the command line (`--labels "k=v,k2=v2"`), a YAML file (`--labels-file`) and the
 * environment (ORRERY_NODE_LABELS, same syntax as the flag). Every result is validated as user
 * labels: the reserved `orrery.io/` prefix is rejected.
 */
import { createRequire } from 'node:module';
import type { Document, Node } from 'yaml';
import { InvalidLabelError } from '../errors.ts';
import { typeName, validateLabelKey, validateLabels } from './validate.ts';

type Yaml = typeof import('yaml');
let yamlModule: Yaml | undefined;

/**
 * The YAML parser, loaded on the first labels file: it is ~7 MB of heap that every process importing
 * orrery would otherwise carry (worker hosts, drivers, a raylet started without --labels-file).
 */
function yaml(): Yaml {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as Yaml);
}

const FLAG_RULES = {
  notString: 'labels must be given as a string of key=value pairs',
  emptyPair: "empty key=value pair (a stray ',')",
  noEquals: "expected key=value (no '=' in this pair)",
  duplicate: 'duplicate key',
} as const;

/**
 * Parses `k1=v1,k2=v2`. Whitespace around pairs and around '=' is ignored; an empty or blank string
 * gives no labels. A pair is split at its first '=', so a value holding '=' is rejected by the
 * value syntax.
 */
export function parseLabelsFlag(text: unknown): Readonly<Record<string, string>> {
  if (typeof text !== 'string') throw new InvalidLabelError('', undefined, `${FLAG_RULES.notString} (got ${typeName(text)})`);
  const out: Record<string, string> = {};
  if (text.trim() === '') return Object.freeze(out);
  for (const raw of text.split(',')) {
    const pair = raw.trim();
    if (pair === '') throw new InvalidLabelError(text, undefined, FLAG_RULES.emptyPair);
    const eq = pair.indexOf('=');
    if (eq < 0) throw new InvalidLabelError(pair, undefined, FLAG_RULES.noEquals);
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    validateLabelKey(key);
    if (Object.hasOwn(out, key)) throw new InvalidLabelError(key, value, FLAG_RULES.duplicate);
    out[key] = value;
  }
  return validateLabels(out);
}

/**
 * The text of a YAML scalar as a label key or value: strings as they are; numbers and booleans as
 * written in the file (so `version: 1.10` stays "1.10" and `rack: 007` stays "007"); null as "".
 */
function scalarText(node: Node | null, doc: Document, what: 'key' | 'value', at: string): string {
  const { isAlias, isMap, isScalar } = yaml();
  const resolved = isAlias(node) ? node.resolve(doc) : node;
  if (resolved === null || resolved === undefined) return '';
  if (!isScalar(resolved)) {
    const kind = isMap(resolved) ? 'a mapping' : 'a list';
    throw new InvalidLabelError(at, undefined, `${what} must be a scalar, not ${kind}`);
  }
  const v = resolved.value;
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return resolved.source ?? String(v);
  throw new InvalidLabelError(at, undefined, `${what} must be a string, number or boolean (got ${typeName(v)})`);
}

/**
 * Parses a labels file: one YAML mapping of keys to scalars. An empty (or comments-only) document
 * gives no labels. Syntax errors, duplicate keys, several documents, nested maps or lists, and a
 * document that is not a mapping are InvalidLabelErrors; a parser error's first line is the rule.
 */
export function parseLabelsYaml(text: unknown): Readonly<Record<string, string>> {
  if (typeof text !== 'string') throw new InvalidLabelError('', undefined, `labels file must be text (got ${typeName(text)})`);
  const { isAlias, isMap, isScalar, parseDocument } = yaml();
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    throw new InvalidLabelError('', undefined, `YAML: ${doc.errors[0].message.split('\n')[0]}`);
  }
  const root = isAlias(doc.contents) ? doc.contents.resolve(doc) : doc.contents;
  if (root === null || root === undefined || (isScalar(root) && root.value === null)) return Object.freeze({});
  if (!isMap(root)) {
    const kind = isScalar(root) ? 'a scalar' : 'a list';
    throw new InvalidLabelError('', undefined, `labels file must be a mapping of keys to values, not ${kind}`);
  }
  const out: Record<string, string> = {};
  for (const pair of root.items) {
    const key = scalarText(pair.key as Node | null, doc, 'key', '');
    const value = scalarText(pair.value as Node | null, doc, 'value', key);
    validateLabelKey(key);
    if (Object.hasOwn(out, key)) throw new InvalidLabelError(key, value, FLAG_RULES.duplicate);
    out[key] = value;
  }
  return validateLabels(out);
}

/**
 * Merges node labels from their three sources. Precedence, lowest to highest:
 * labels file < ORRERY_NODE_LABELS < --labels. The flag wins over the file as seed 002 asks; the
 * environment sits between so a deployment can override a shared file while a person at the
 * command line still has the last word.
 */
export function composeLabels(
  fromFile: Readonly<Record<string, string>> | undefined,
  fromFlag: Readonly<Record<string, string>> | undefined,
  fromEnv?: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  return validateLabels({ ...validateLabels(fromFile ?? {}), ...validateLabels(fromEnv ?? {}), ...validateLabels(fromFlag ?? {}) });
}
