import { InvalidResourceError } from '../errors.ts';
import { fromUnits, toUnits } from './quantity.ts';

/**
 * A resource set maps resource names (CPU, GPU, memory, custom names) to quantities in units
 * (see quantity.ts). Absent names mean zero. Sets are plain objects so they survive msgpackr.
 */
export type ResourceSet = Readonly<Record<string, number>>;

const NAME = /^[A-Za-z_][A-Za-z0-9_.\-/]{0,127}$/;

/** Parses user-facing quantities (`{ CPU: 0.5, GPU: 1 }`) into a resource set; zeros are dropped. */
export function parseResources(input: unknown, what = 'resources'): ResourceSet {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidResourceError(what, input, 'expected an object of resource name to quantity');
  }
  const out: Record<string, number> = {};
  for (const [name, amount] of Object.entries(input)) {
    // Names Object.prototype carries (toString, valueOf, __proto__, …) would read as functions
    // where a set lacks them, so fits/addResources would see a function instead of 0.
    if (!NAME.test(name) || name in Object.prototype || name === 'prototype') {
      throw new InvalidResourceError(name, amount, 'resource names start with a letter or _ and use letters, digits, _ . - /');
    }
    const units = toUnits(name, amount);
    if (units > 0) out[name] = units;
  }
  return out;
}

/** The user-facing form of a resource set (`{ CPU: 0.5 }`). */
export function formatResources(set: ResourceSet): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of Object.keys(set).sort()) out[name] = fromUnits(name, set[name]);
  return out;
}

/** Does `have` hold at least `need` of every resource? */
export function fits(have: ResourceSet, need: ResourceSet): boolean {
  for (const name in need) {
    if ((have[name] ?? 0) < need[name]) return false;
  }
  return true;
}

/** The names of the resources `have` holds too little of, sorted. */
export function shortOf(have: ResourceSet, need: ResourceSet): string[] {
  const out: string[] = [];
  for (const name in need) {
    if ((have[name] ?? 0) < need[name]) out.push(name);
  }
  return out.sort();
}

export function addResources(a: ResourceSet, b: ResourceSet): Record<string, number> {
  const out: Record<string, number> = { ...a };
  for (const name in b) out[name] = (out[name] ?? 0) + b[name];
  return out;
}

/** a − b; throws when b is not contained in a, so a resource can never go negative. */
export function subtractResources(a: ResourceSet, b: ResourceSet): Record<string, number> {
  if (!fits(a, b)) {
    const name = shortOf(a, b)[0];
    throw new InvalidResourceError(name, fromUnits(name, b[name]), `cannot take more than the ${fromUnits(name, a[name] ?? 0)} held`);
  }
  const out: Record<string, number> = { ...a };
  for (const name in b) out[name] -= b[name];
  return out;
}

export function isEmptyResources(set: ResourceSet): boolean {
  for (const name in set) if (set[name] > 0) return false;
  return true;
}

export function resourcesEqual(a: ResourceSet, b: ResourceSet): boolean {
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const name of names) if ((a[name] ?? 0) !== (b[name] ?? 0)) return false;
  return true;
}
