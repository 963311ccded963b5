import { InvalidLabelError, InvalidOptionError, InvalidTaintError } from '../errors.ts';
import { labelKeyProblem, validateLabelKey, validateLabelValue } from '../labels/validate.ts';
import type { ResourceSet } from '../resources/resource-set.ts';
import { conditionMatches, type Condition } from '../selectors/expression.ts';

/**
 * Taints mark a node as off-limits to requests that do not tolerate them (seed 003, Kubernetes).
 *
 *   NoSchedule        new placements need a matching toleration (the default effect)
 *   PreferNoSchedule  placements avoid the node when another one will do
 *   NoExecute         like NoSchedule, and running actors that do not tolerate it are moved
 *
 * On the wire and in NodeInfo a taint is `key: value` or `key: "value:Effect"`, as `kubectl taint`.
 */
export const TaintEffect = { NoSchedule: 'NoSchedule', PreferNoSchedule: 'PreferNoSchedule', NoExecute: 'NoExecute' } as const;
export type TaintEffect = (typeof TaintEffect)[keyof typeof TaintEffect];

export interface Taint {
  readonly key: string;
  readonly value: string;
  readonly effect: TaintEffect;
}

/**
 * A toleration: a condition on the taint's value and, optionally, the one effect it tolerates
 * (absent: every effect, as Kubernetes). `NoSchedule` alone therefore still lets a `NoExecute`
 * taint with the same key evict the actor.
 */
export interface Toleration extends Condition {
  readonly effect?: TaintEffect;
}

/**
 * Tolerations by taint key. The empty key is the wildcard (Kubernetes: empty key with operator
 * Exists): it tolerates every taint, of its effect or of all effects.
 */
export type Tolerations = Readonly<Record<string, Toleration>>;

/** The wildcard toleration's key: `{ [ANY_TAINT]: Exists() }` tolerates every taint. */
export const ANY_TAINT = '';

const EFFECTS = new Set<string>(Object.values(TaintEffect));

/** Parses one taint value (`"true"`, `"true:NoExecute"`) for `key`; every problem is an InvalidTaintError. */
export function parseTaint(key: string, raw: string, opts: { allowReserved?: boolean } = {}): Taint {
  if (typeof raw !== 'string') throw new InvalidTaintError(String(key), String(raw), 'the value must be a string');
  const colon = raw.lastIndexOf(':');
  let value = raw;
  let effect: TaintEffect = 'NoSchedule';
  if (colon >= 0) {
    const named = raw.slice(colon + 1);
    if (!EFFECTS.has(named)) throw new InvalidTaintError(key, raw, `the effect must be one of ${[...EFFECTS].join(', ')} (got ${JSON.stringify(named)})`);
    value = raw.slice(0, colon);
    effect = named as TaintEffect;
  }
  try {
    validateLabelKey(key, { allowReserved: opts.allowReserved });
    validateLabelValue(key, value);
  } catch (err) {
    // a taint's key and value follow the label syntax; the error says which taint broke it
    if (err instanceof InvalidLabelError) throw new InvalidTaintError(key, raw, err.rule);
    throw err;
  }
  return { key, value, effect };
}

/** Parses a taint record (`{ gpu_node: 'true', pressure: 'high:PreferNoSchedule' }`). */
export function parseTaints(record: Readonly<Record<string, string>>, opts: { allowReserved?: boolean } = {}): Taint[] {
  return Object.entries(record).map(([key, raw]) => parseTaint(key, raw, opts));
}

/** The record form of taints, effect suffixed unless it is the default NoSchedule. */
export function formatTaints(taints: readonly Taint[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const t of taints) out[t.key] = t.effect === 'NoSchedule' ? t.value : `${t.value}:${t.effect}`;
  return out;
}

export function describeTaint(t: Taint): string {
  return `{${t.key}: ${t.value}}`;
}

/** Kubernetes' ToleratesTaint: the effect (when given) must be the taint's, then the key and value. */
export function tolerates(tolerations: Tolerations, taint: Taint): boolean {
  const own = Object.hasOwn(tolerations, taint.key) ? tolerations[taint.key] : undefined;
  if (own !== undefined && (own.effect === undefined || own.effect === taint.effect) && conditionMatches(own, taint.value)) return true;
  const any = Object.hasOwn(tolerations, ANY_TAINT) ? tolerations[ANY_TAINT] : undefined;
  return any !== undefined && (any.effect === undefined || any.effect === taint.effect);
}

/** The first taint that keeps the request off the node (NoSchedule or NoExecute), if any. */
export function firstUntoleratedTaint(taints: readonly Taint[], tolerations: Tolerations): Taint | undefined {
  for (const t of taints) {
    if (t.effect !== 'PreferNoSchedule' && !tolerates(tolerations, t)) return t;
  }
  return undefined;
}

/** Does the node carry a PreferNoSchedule taint the request does not tolerate? */
export function hasUntoleratedPreference(taints: readonly Taint[], tolerations: Tolerations): boolean {
  return untoleratedPreferences(taints, tolerations) > 0;
}

/** How many PreferNoSchedule taints of the node the request does not tolerate (Kubernetes' TaintToleration score counts these). */
export function untoleratedPreferences(taints: readonly Taint[], tolerations: Tolerations): number {
  let n = 0;
  for (const t of taints) if (t.effect === 'PreferNoSchedule' && !tolerates(tolerations, t)) n++;
  return n;
}

/**
 * Rare-resource isolation (seed 003 follow-on): with `rareResources: ['GPU']`, a node that has GPUs
 * carries the taint `orrery.io/rare-gpu=true`, and a request that asks for GPUs tolerates it
 * automatically — so plain CPU work never lands on, and crowds out, the scarce machines.
 */
export function rareResourceTaintKey(resource: string): string {
  const key = `orrery.io/rare-${resource.toLowerCase()}`;
  const problem = labelKeyProblem(key, { allowReserved: true });
  if (problem) throw new InvalidOptionError('rareResources', resource, `${JSON.stringify(resource)} cannot name a taint (${key}): ${problem}`);
  return key;
}

export function rareResourceTaints(total: ResourceSet, rareResources: readonly string[]): Taint[] {
  return rareResources
    .filter((r) => (total[r] ?? 0) > 0)
    .map((r) => ({ key: rareResourceTaintKey(r), value: 'true', effect: 'NoSchedule' as const }));
}

export function rareResourceTolerations(request: ResourceSet, rareResources: readonly string[]): Record<string, Toleration> {
  const out: Record<string, Toleration> = {};
  for (const r of rareResources) {
    if ((request[r] ?? 0) > 0) out[rareResourceTaintKey(r)] = { operator: 'EXISTS', values: [] };
  }
  return out;
}
