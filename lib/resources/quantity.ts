import { InvalidResourceError } from '../errors.ts';

/**
 * Resource quantities are fixed-point integers ("units"), so fractional amounts never drift: 0.1 CPU
 * allocated and freed a million times leaves exactly what was there. Most resources keep 4 decimal
 * places (1 CPU = 10,000 units, as Ray's FixedPoint). Byte-counted resources (`memory`,
 * `object_store_memory`) are whole bytes — 1 unit per byte — so a 2 TiB machine still fits a
 * JavaScript number exactly.
 */
export const UNITS_PER_WHOLE = 10_000;
const BYTE_RESOURCES = new Set(['memory', 'object_store_memory']);
/** A placement-group bundle's form of a byte resource (memory_group_<pg>, memory_group_<i>_<pg>): same units. */
const BYTE_BUNDLE_RESOURCE = /^(?:memory|object_store_memory)_group_/;

/** Largest quantity of any resource, in units (2^53 - 1, the largest exact integer). */
export const MAX_UNITS = Number.MAX_SAFE_INTEGER;

export function unitScale(resource: string): number {
  return BYTE_RESOURCES.has(resource) || BYTE_BUNDLE_RESOURCE.test(resource) ? 1 : UNITS_PER_WHOLE;
}

/** Converts a user-facing quantity to units, rejecting what cannot be a resource amount. */
export function toUnits(resource: string, amount: unknown): number {
  if (typeof amount !== 'number' || !Number.isFinite(amount)) {
    throw new InvalidResourceError(resource, amount, 'quantity must be a finite number');
  }
  if (amount < 0) throw new InvalidResourceError(resource, amount, 'quantity must not be negative');
  const scale = unitScale(resource);
  const units = Math.round(amount * scale);
  if (units > MAX_UNITS) {
    throw new InvalidResourceError(resource, amount, `quantity must be at most ${MAX_UNITS / scale}`);
  }
  if (scale === 1 && units !== amount) {
    throw new InvalidResourceError(resource, amount, 'quantity is a count of bytes and must be a whole number');
  }
  if (units === 0 && amount > 0) {
    throw new InvalidResourceError(resource, amount, `quantity must be 0 or at least ${1 / scale}`);
  }
  return units;
}

/** Converts units back to the user-facing quantity. */
export function fromUnits(resource: string, units: number): number {
  return units / unitScale(resource);
}
