import { InvalidOptionError } from '../../lib/errors.ts';
import { validateLabels } from '../../lib/labels/validate.ts';
import { compileRequest, PLACEMENT_KEYS, type PlacementOptions } from '../../lib/scheduling/request.ts';

/** Placement options shared by actors, tasks and placement groups (API.md). */
export type TaskOptions = PlacementOptions;

export type ActorOptions = TaskOptions & {
  name?: string;
  namespace?: string;
  /** Actor labels, matched by actor affinity; `orrery.io/actor-id` is added automatically. */
  labels?: Record<string, string>;
  /** 0 by default, -1 for no limit. */
  maxRestarts?: number;
  /** 0 by default (calls fail while the actor restarts), -1 for no limit. */
  maxTaskRetries?: number;
  /** 1 by default: one call at a time. */
  maxConcurrency?: number;
  /** 'shared' (default): a worker host shared with other actors; 'process': a host of its own. */
  isolation?: 'shared' | 'process';
  /**
   * 'ignored' (default): hard constraints are checked when the actor is placed. 'required': also
   * while it runs — when one stops holding (its affinity peer left, the node's labels changed, an
   * actor it is anti-affine to arrived) the actor is restarted where they hold, counting a restart
   * (docs/failover.md).
   */
  affinityDuringExecution?: 'required' | 'ignored';
  /**
   * 'detached': the actor outlives the job (the `connect()`) that created it and lives until killed.
   * Default: owned by that job — killed when the job finishes (close(), or its driver's heartbeats
   * stop), which frees its name (docs/jobs.md).
   */
  lifetime?: 'detached';
};

const ACTOR_KEYS = ['name', 'namespace', 'labels', 'maxRestarts', 'maxTaskRetries', 'maxConcurrency', 'isolation', 'affinityDuringExecution', 'lifetime'] as const;
const KNOWN = new Set<string>([...PLACEMENT_KEYS, ...ACTOR_KEYS]);
const MAX_NAME = 256;

/** Actor options after validation: what register_actor carries. */
export interface ValidatedActorOptions {
  readonly namespace: string;
  readonly name?: string;
  /** The options as plain data, undefined fields left out. */
  readonly wire: Record<string, unknown>;
}

/**
 * Checks actor options at the call — placement through lib's compileRequest, the actor fields here —
 * and throws the first problem as a typed error (INVALID_OPTION, INVALID_SELECTOR, INVALID_LABEL,
 * INVALID_RESOURCE) naming the option. Unknown option names are errors too: a misspelt option must
 * not be silently ignored.
 */
export function validateActorOptions(opts: ActorOptions, ctx: { namespace: string; actorId?: string }): ValidatedActorOptions {
  if (opts === null || typeof opts !== 'object' || Array.isArray(opts)) throw new InvalidOptionError('options', opts, 'expected an object');
  for (const key of Object.keys(opts)) {
    if (!KNOWN.has(key)) throw new InvalidOptionError(key, (opts as Record<string, unknown>)[key], `unknown actor option; expected one of ${[...KNOWN].join(', ')}`);
  }
  const namespace = opts.namespace ?? ctx.namespace;
  checkName('namespace', namespace);
  if (opts.name !== undefined) checkName('name', opts.name);
  if (opts.labels !== undefined) validateLabels(opts.labels);
  checkInteger('maxRestarts', opts.maxRestarts, -1);
  checkInteger('maxTaskRetries', opts.maxTaskRetries, -1);
  checkInteger('maxConcurrency', opts.maxConcurrency, 1, 100_000);
  if (opts.isolation !== undefined && opts.isolation !== 'shared' && opts.isolation !== 'process') {
    throw new InvalidOptionError('isolation', opts.isolation, "expected 'shared' or 'process'");
  }
  const during = opts.affinityDuringExecution;
  if (during !== undefined && during !== 'required' && during !== 'ignored') {
    throw new InvalidOptionError('affinityDuringExecution', during, "expected 'required' or 'ignored'");
  }
  checkLifetime(opts.lifetime);
  const target = ctx.actorId === undefined ? undefined : { kind: 'actor' as const, id: ctx.actorId, ...(opts.name === undefined ? {} : { name: opts.name }) };
  compileRequest(opts, { namespace, target });
  const wire: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(opts)) if (value !== undefined) wire[key] = value;
  wire.namespace = namespace;
  return { namespace, name: opts.name, wire };
}

/** `lifetime`: 'detached', or absent (owned by the creating job). Shared with placement groups. */
export function checkLifetime(value: unknown): void {
  if (value !== undefined && value !== 'detached') throw new InvalidOptionError('lifetime', value, "expected 'detached' (or no lifetime: owned by the job that creates it)");
}

function checkName(option: string, value: unknown): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_NAME) {
    throw new InvalidOptionError(option, value, `expected a non-empty string of at most ${MAX_NAME} characters`);
  }
}

function checkInteger(option: string, value: unknown, min: number, max = Number.MAX_SAFE_INTEGER): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`;
    throw new InvalidOptionError(option, value, `expected an integer ${range}`);
  }
}
