import { InvalidOptionError } from '../../lib/errors.ts';
import { ACTOR_ID_LABEL } from '../../lib/labels/builtin.ts';
import { validateLabels } from '../../lib/labels/validate.ts';
import type { ResourceSet } from '../../lib/resources/resource-set.ts';
import { compileRequest, PLACEMENT_KEYS, type PlacementOptions } from '../../lib/scheduling/request.ts';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import type { RegisterActor } from '../../protocols/messages/actor.ts';

/**
 * What the GCS makes of a register_actor request's `options` (the API's ActorOptions as plain
 * data). Placement options go through lib's compileRequest, so their errors are lib's
 * (INVALID_OPTION, INVALID_SELECTOR, INVALID_LABEL, INVALID_RESOURCE); the actor-only options are
 * checked here with the same errors.
 *
 * Resources follow Ray: an actor that does not set `numCpus` needs 1 CPU free to be placed but
 * holds none while it lives (so any number of default actors run on a node with a CPU); what it
 * sets explicitly it holds.
 */
export interface CompiledActor {
  /** The request the scheduler decides with. */
  readonly request: SchedulingRequest;
  /** What the actor holds on its node while placed. */
  readonly held: ResourceSet;
  /** The actor's labels, with its automatic orrery.io/actor-id label. */
  readonly labels: Record<string, string>;
  readonly maxRestarts: number;
  readonly maxConcurrency: number;
  readonly isolation: 'shared' | 'process';
  /**
   * affinityDuringExecution: 'required' re-places the running actor when one of its hard constraints
   * stops holding (docs/failover.md); 'ignored' (the default, as Kubernetes'
   * IgnoredDuringExecution) checks them at placement only.
   */
  readonly requiredDuringExecution: boolean;
  /** It has actor-affinity terms that another actor's placement can satisfy. */
  readonly waitsOnPeers: boolean;
  /**
   * What its placement depends on, as a string: actors with the same shape get the same decision
   * from the same cluster state (the pending queue reuses an unschedulable one within a pass).
   */
  readonly shape: string;
}

const MAX_CONCURRENCY = 100_000;

/** CPUs an actor without `numCpus` needs free to be placed (Ray: 1); it holds none (see above). */
export const SCHEDULING_DEFAULT_CPUS = 1;

export function compileActor(reg: RegisterActor, ctx: { rareResources: readonly string[] }): CompiledActor {
  const options = reg.options as PlacementOptions & Record<string, unknown>;
  const target = { kind: 'actor' as const, id: reg.actorId, ...(reg.name === undefined ? {} : { name: reg.name }) };
  const request = compileRequest(options, { namespace: reg.namespace, target, rareResources: ctx.rareResources, defaultCpus: SCHEDULING_DEFAULT_CPUS });
  // Only the default CPU differs between what it needs and what it holds: with numCpus set, the
  // same compile would give the same resources again.
  const held = options.numCpus !== undefined && options.numCpus !== null
    ? request.resources
    : compileRequest(options, { namespace: reg.namespace, target, rareResources: ctx.rareResources, defaultCpus: 0 }).resources;
  const labels = { ...validateLabels(options.labels ?? {}), [ACTOR_ID_LABEL]: reg.actorId };
  // maxTaskRetries is the client's business (it retries calls), but a bad value is refused here
  integerOption(options, 'maxTaskRetries', { min: -1, fallback: 0 });
  lifetimeOption(options.lifetime);
  return new Compiled(
    request,
    Object.keys(held).length === 0 ? NOTHING_HELD : held,
    labels,
    integerOption(options, 'maxRestarts', { min: -1, fallback: 0 }),
    integerOption(options, 'maxConcurrency', { min: 1, max: MAX_CONCURRENCY, fallback: 1 }),
    isolationOption(options.isolation),
    duringExecutionOption(options.affinityDuringExecution),
    request.actorAffinity.some((e) => e.operator !== 'NOT_IN' && e.operator !== 'DOES_NOT_EXIST'),
    reg.namespace,
    options,
  );
}

/** What a default actor holds (no CPU): one shared object, not one per actor. */
const NOTHING_HELD: ResourceSet = Object.freeze({});

/**
 * A class rather than an object literal with a lazy getter: the getter's closure and its context
 * cost every actor ~140 B (bench/sim), the prototype's getter nothing.
 */
class Compiled implements CompiledActor {
  #shape: string | undefined;
  constructor(
    readonly request: SchedulingRequest,
    readonly held: ResourceSet,
    readonly labels: Record<string, string>,
    readonly maxRestarts: number,
    readonly maxConcurrency: number,
    readonly isolation: 'shared' | 'process',
    readonly requiredDuringExecution: boolean,
    readonly waitsOnPeers: boolean,
    private readonly namespace: string,
    private readonly options: Record<string, unknown>,
  ) {}

  // made when first asked for: only a placement that proved unschedulable needs it
  get shape(): string {
    return (this.#shape ??= placementShape(this.namespace, this.options));
  }
}

/** The options a decision reads (not the actor's name, labels, restarts, …), in a canonical order. */
function placementShape(namespace: string, options: Record<string, unknown>): string {
  return JSON.stringify([namespace, ...PLACEMENT_KEYS.map((k) => options[k] ?? null)]);
}

function duringExecutionOption(value: unknown): boolean {
  if (value === undefined || value === null || value === 'ignored') return false;
  if (value === 'required') return true;
  throw new InvalidOptionError('affinityDuringExecution', value, "expected 'required' or 'ignored'");
}

function integerOption(options: Record<string, unknown>, name: string, rule: { min: number; max?: number; fallback: number }): number {
  const value = options[name];
  if (value === undefined || value === null) return rule.fallback;
  const tooBig = rule.max !== undefined && (value as number) > rule.max;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < rule.min || tooBig) {
    const range = rule.max === undefined ? `>= ${rule.min}` : `between ${rule.min} and ${rule.max}`;
    throw new InvalidOptionError(name, value, `expected an integer ${range}${rule.min === -1 ? ' (-1: no limit)' : ''}`);
  }
  return value;
}

/**
 * `lifetime` of an actor or a placement group (docs/jobs.md): 'detached' outlives the job that
 * created it; absent (null), it is owned by that job.
 */
export function lifetimeOption(value: unknown): 'detached' | undefined {
  if (value === undefined || value === null) return undefined;
  if (value === 'detached') return 'detached';
  throw new InvalidOptionError('lifetime', value, "expected 'detached' (or no lifetime: owned by the job that creates it)");
}

function isolationOption(value: unknown): 'shared' | 'process' {
  if (value === undefined || value === null) return 'shared';
  if (value === 'shared' || value === 'process') return value;
  throw new InvalidOptionError('isolation', value, "expected 'shared' or 'process'");
}
