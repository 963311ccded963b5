import { InvalidOptionError } from '../../lib/errors.ts';
import { compilePlacementGroup, type PlacementGroupOptions } from '../../lib/scheduling/bundles/request.ts';
import { checkLifetime } from './actor-options.ts';
import { newRandomId } from './random-id.ts';

/** `cluster.placementGroup()`'s argument: the API's options, and the namespace its name lives in. */
export type ClientPlacementGroupOptions = PlacementGroupOptions & {
  namespace?: string;
  /** 'detached': the group outlives the job that created it; default: removed when that job finishes (docs/jobs.md). */
  lifetime?: 'detached';
};

const KNOWN = new Set(['bundles', 'strategy', 'name', 'bundleLabelSelector', 'fallbackStrategy', 'tolerations', 'namespace', 'lifetime']);
const MAX_NAME = 256;

/** A fresh placement group id: the actors' scheme, 16 lowercase hex characters (a valid subject token). */
export const newPlacementGroupId = newRandomId;

/** Placement-group options after validation: what create_pg carries. */
export interface ValidatedPlacementGroupOptions {
  readonly namespace: string;
  readonly name?: string;
  /** The API argument as plain data (no namespace; undefined fields left out), for the GCS to compile again. */
  readonly wire: Record<string, unknown>;
}

/**
 * Checks placement-group options at the call with lib's compilePlacementGroup (bundles, selectors,
 * strategy, tolerations) and the name and namespace here; throws the first problem as a typed
 * error (INVALID_OPTION, INVALID_RESOURCE, INVALID_SELECTOR, …). Unknown option names are errors:
 * a misspelt option must not be silently ignored.
 */
export function validatePlacementGroupOptions(opts: ClientPlacementGroupOptions, ctx: { namespace: string; pgId?: string }): ValidatedPlacementGroupOptions {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new InvalidOptionError('placementGroup', opts, 'expected an options object');
  for (const key of Object.keys(opts)) {
    if (!KNOWN.has(key)) {
      throw new InvalidOptionError(key, (opts as unknown as Record<string, unknown>)[key], `unknown placement group option; expected one of ${[...KNOWN].join(', ')}`);
    }
  }
  const namespace = opts.namespace ?? ctx.namespace;
  checkName('namespace', namespace);
  if (opts.name !== undefined) checkName('name', opts.name);
  checkLifetime(opts.lifetime);
  compilePlacementGroup(opts, { id: ctx.pgId, name: opts.name });
  const { namespace: _ns, ...rest } = opts;
  return { namespace, name: opts.name, wire: toPlain(rest) as Record<string, unknown> };
}

/**
 * A deep copy of plain objects and arrays, undefined fields left out: selectors and tolerations
 * built with the lib's builders (frozen objects) travel as the maps and lists they are.
 */
function toPlain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toPlain);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = toPlain(v);
  return out;
}

function checkName(option: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_NAME) {
    throw new InvalidOptionError(option, value, `expected a non-empty string of at most ${MAX_NAME} characters`);
  }
}
