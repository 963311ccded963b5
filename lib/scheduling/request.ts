import { InvalidOptionError, InvalidResourceError, InvalidSelectorError } from '../errors.ts';
import { validateLabelKey } from '../labels/validate.ts';
import { parseResources, type ResourceSet } from '../resources/resource-set.ts';
import { toUnits } from '../resources/quantity.ts';
import { validateCondition, validateExpression } from '../selectors/builders.ts';
import { isAnyOf, type LabelMatchAnyOf, type LabelMatchExpression } from '../selectors/expression.ts';
import { nodeAffinityTerms } from '../selectors/terms.ts';
import { parseLabelSelector, type SelectorValue } from '../selectors/parse.ts';
import { resourcesInBundle } from './bundle-resources.ts';
import type { SchedulingRequest, TargetKind } from './request.types.ts';
import type { SchedulingStrategy } from './strategy.types.ts';
import { rareResourceTolerations, type Toleration } from './taints.ts';
import { compileTolerations } from './tolerations.ts';

/** The scheduling part of TaskOptions / ActorOptions (API.md). */
export interface PlacementOptions {
  numCpus?: number;
  numGpus?: number;
  memory?: number;
  resources?: Record<string, number>;
  labelSelector?: Record<string, SelectorValue>;
  fallbackStrategy?: { labelSelector: Record<string, SelectorValue> }[];
  tolerations?: Record<string, Toleration>;
  schedulingStrategy?: SchedulingStrategy;
}

/**
 * Every key of PlacementOptions, in a canonical order: the one list the client's actor and task
 * options, the GCS's placement shape and the raylet read (issue 14: one set of placement keys).
 */
export const PLACEMENT_KEYS = ['numCpus', 'numGpus', 'memory', 'resources', 'labelSelector', 'fallbackStrategy', 'tolerations', 'schedulingStrategy'] as const satisfies readonly (keyof PlacementOptions)[];

export interface CompileContext {
  readonly namespace: string;
  readonly target?: { readonly kind: TargetKind; readonly id: string; readonly name?: string };
  /** CPUs asked for when `numCpus` is absent (Ray: 1 for tasks and for scheduling actors). */
  readonly defaultCpus?: number;
  /** The cluster's rare resources: requests for them tolerate their taints automatically. */
  readonly rareResources?: readonly string[];
}

const BUILTIN = { numCpus: 'CPU', numGpus: 'GPU', memory: 'memory' } as const;

/**
 * Validates placement options and turns them into a SchedulingRequest. Every problem is a typed
 * error (INVALID_OPTION, INVALID_SELECTOR, INVALID_LABEL, INVALID_RESOURCE) naming the option and
 * the offending value, raised here — at the call — never later inside the scheduler.
 */
export function compileRequest(opts: PlacementOptions, ctx: CompileContext): SchedulingRequest {
  if (opts === null || typeof opts !== 'object') throw new InvalidOptionError('options', opts, 'expected an object');
  let resources = compileResources(opts, ctx.defaultCpus ?? 1);
  const strategy = opts.schedulingStrategy ?? 'DEFAULT';
  const selectorTiers = [selector('labelSelector', opts.labelSelector)];
  if (opts.fallbackStrategy !== undefined) {
    if (!Array.isArray(opts.fallbackStrategy)) throw new InvalidOptionError('fallbackStrategy', opts.fallbackStrategy, 'expected an array of { labelSelector }');
    opts.fallbackStrategy.forEach((f: unknown, i) => {
      checkEntry(`fallbackStrategy[${i}]`, f, { required: ['labelSelector'], allowed: ['labelSelector'] });
      selectorTiers.push(selector(`fallbackStrategy[${i}].labelSelector`, (f as { labelSelector: unknown }).labelSelector));
    });
  }
  const tolerations = { ...rareResourceTolerations(resources, ctx.rareResources ?? []), ...compileTolerations('tolerations', opts.tolerations) };
  let nodeAffinity: LabelMatchExpression[] = [];
  const nodeAffinityAnyOf: LabelMatchAnyOf[] = [];
  let actorAffinity: LabelMatchExpression[] = [];
  let nodeId: SchedulingRequest['nodeId'];
  if (strategy !== 'DEFAULT' && strategy !== 'SPREAD') {
    if (strategy === null || typeof strategy !== 'object') throw new InvalidOptionError('schedulingStrategy', strategy, 'expected DEFAULT, SPREAD or a strategy built by a builder');
    switch (strategy.type) {
      case 'NODE_AFFINITY':
        if (!Array.isArray(strategy.expressions) || strategy.expressions.length === 0) throw new InvalidOptionError('schedulingStrategy', strategy.expressions, 'expected a non-empty list of label match expressions');
        for (const term of nodeAffinityTerms('schedulingStrategy', strategy.expressions)) {
          if (isAnyOf(term)) nodeAffinityAnyOf.push(term);
          else nodeAffinity.push(term);
        }
        break;
      case 'ACTOR_AFFINITY':
        actorAffinity = expressions('schedulingStrategy', strategy.expressions);
        break;
      case 'NODE_LABEL':
        nodeAffinity = [...conditions(strategy.hard, false), ...conditions(strategy.soft, true)];
        break;
      case 'NODE_ID_AFFINITY':
        if (typeof strategy.nodeId !== 'string' || strategy.nodeId === '') throw new InvalidOptionError('schedulingStrategy.nodeId', strategy.nodeId, 'expected a node id');
        nodeId = strategy;
        break;
      case 'PLACEMENT_GROUP':
        if (typeof strategy.placementGroupId !== 'string' || strategy.placementGroupId === '' || !Number.isInteger(strategy.bundleIndex) || strategy.bundleIndex < -1) {
          throw new InvalidOptionError('schedulingStrategy', strategy, 'expected placementGroupStrategy(pg, bundleIndex ≥ -1)');
        }
        resources = resourcesInBundle(resources, strategy.placementGroupId, strategy.bundleIndex);
        break;
      default:
        throw new InvalidOptionError('schedulingStrategy', strategy, 'unknown strategy type');
    }
  }
  return {
    target: ctx.target,
    namespace: ctx.namespace,
    resources,
    selectorTiers,
    nodeAffinity,
    ...(nodeAffinityAnyOf.length ? { nodeAffinityAnyOf } : {}),
    actorAffinity,
    nodeId,
    tolerations,
    spread: strategy === 'SPREAD',
  };
}

function compileResources(opts: PlacementOptions, defaultCpus: number): ResourceSet {
  const custom = opts.resources === undefined ? {} : parseResources(opts.resources, 'resources');
  const out: Record<string, number> = { ...custom };
  for (const [option, name] of Object.entries(BUILTIN) as [keyof typeof BUILTIN, string][]) {
    if (opts.resources !== null && typeof opts.resources === 'object' && Object.hasOwn(opts.resources, name)) {
      throw new InvalidOptionError('resources', opts.resources, `use the ${option} option for ${name}, not resources`);
    }
    const amount = opts[option] ?? (option === 'numCpus' ? defaultCpus : 0);
    let units: number;
    try {
      units = toUnits(name, amount);
    } catch (err) {
      throw err instanceof InvalidResourceError ? new InvalidOptionError(option, amount, err.rule) : err;
    }
    if (units > 0) out[name] = units;
  }
  return out;
}

/**
 * A fallbackStrategy entry is checked like the top-level options: an unknown key (a misspelling, or
 * `numCpus` that only the top level takes) and a missing required key are refused with the field
 * named — never silently ignored, and `{}` never becomes "any node".
 */
export function checkEntry(option: string, entry: unknown, keys: { required: readonly string[]; allowed: readonly string[] }): void {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    throw new InvalidOptionError(option, entry, `expected { ${keys.allowed.join(', ')} }`);
  }
  for (const key of Object.keys(entry)) {
    if (!keys.allowed.includes(key)) {
      throw new InvalidOptionError(`${option}.${key}`, (entry as Record<string, unknown>)[key], `unknown field; a fallback takes only ${keys.allowed.join(', ')}`);
    }
  }
  for (const key of keys.required) {
    if ((entry as Record<string, unknown>)[key] === undefined) throw new InvalidOptionError(`${option}.${key}`, undefined, 'required: an empty fallback would mean any node');
  }
}

/** Parses one selector tier; errors say which option (labelSelector or a fallback) held it. */
function selector(option: string, value: unknown): LabelMatchExpression[] {
  try {
    return parseLabelSelector(value ?? {});
  } catch (err) {
    if (err instanceof InvalidSelectorError) throw new InvalidSelectorError(err.key, err.value, `${option}: ${err.rule}`);
    throw err;
  }
}

function expressions(option: string, list: unknown): LabelMatchExpression[] {
  if (!Array.isArray(list) || list.length === 0) throw new InvalidOptionError(option, list, 'expected a non-empty list of label match expressions');
  return list.map((e) => validateExpression(e));
}

function conditions(record: unknown, soft: boolean): LabelMatchExpression[] {
  if (record === undefined) return [];
  if (record === null || typeof record !== 'object') throw new InvalidOptionError('schedulingStrategy', record, 'expected hard/soft condition maps');
  return Object.entries(record).map(([key, cond]) => {
    validateLabelKey(key, { allowReserved: true });
    const c = validateCondition(key, cond);
    return { key, operator: c.operator, values: c.values, soft };
  });
}
