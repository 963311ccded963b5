import { InvalidOptionError } from '../../errors.ts';
import { parseResources, type ResourceSet } from '../../resources/resource-set.ts';
import type { LabelMatchExpression } from '../../selectors/expression.ts';
import { parseLabelSelector, type SelectorValue } from '../../selectors/parse.ts';
import { rareResourceTolerations, type Toleration, type Tolerations } from '../taints.ts';
import { compileTolerations } from '../tolerations.ts';
import { checkEntry } from '../request.ts';

export const BUNDLE_STRATEGIES = ['PACK', 'SPREAD', 'STRICT_PACK', 'STRICT_SPREAD'] as const;
export type BundleStrategy = (typeof BUNDLE_STRATEGIES)[number];

export interface BundleSpec {
  readonly resources: ResourceSet;
  readonly selector: readonly LabelMatchExpression[];
}

/** A validated placement-group request: its strategy and one bundle list per fallback tier. */
export interface PlacementGroupRequest {
  readonly target?: { readonly kind: 'placement_group'; readonly id: string; readonly name?: string };
  readonly strategy: BundleStrategy;
  /** tiers[0] is `bundles` + `bundleLabelSelector`; then each fallbackStrategy entry in order. */
  readonly tiers: readonly (readonly BundleSpec[])[];
  readonly tolerations: Tolerations;
  /**
   * Nodes already holding other bundles of the group (rescheduling the bundles a dead node held):
   * STRICT_SPREAD keeps off them, SPREAD prefers other nodes, PACK prefers them.
   */
  readonly placed?: readonly string[];
}

export interface PlacementGroupOptions {
  bundles: Record<string, number>[];
  strategy?: BundleStrategy;
  name?: string;
  bundleLabelSelector?: Record<string, SelectorValue>[];
  fallbackStrategy?: { bundles: Record<string, number>[]; bundleLabelSelector?: Record<string, SelectorValue>[] }[];
  tolerations?: Record<string, Toleration>;
}

/**
 * Validates placement-group options (API.md) at the call: bundles must reserve something and
 * nothing negative, selector lists must match the bundles 1:1, the strategy must be one of the
 * four. Nothing is reserved when this throws.
 */
export function compilePlacementGroup(
  opts: PlacementGroupOptions,
  ctx: { id?: string; name?: string; rareResources?: readonly string[] } = {},
): PlacementGroupRequest {
  if (opts === null || typeof opts !== 'object') throw new InvalidOptionError('placementGroup', opts, 'expected an options object');
  const strategy = opts.strategy ?? 'PACK';
  if (!BUNDLE_STRATEGIES.includes(strategy)) {
    throw new InvalidOptionError('strategy', strategy, `expected one of ${BUNDLE_STRATEGIES.join(', ')}`);
  }
  const tiers = [tier('bundles', opts.bundles, opts.bundleLabelSelector)];
  if (opts.fallbackStrategy !== undefined) {
    if (!Array.isArray(opts.fallbackStrategy)) throw new InvalidOptionError('fallbackStrategy', opts.fallbackStrategy, 'expected an array of { bundles, bundleLabelSelector? }');
    opts.fallbackStrategy.forEach((f, i) => {
      checkEntry(`fallbackStrategy[${i}]`, f, { required: ['bundles'], allowed: ['bundles', 'bundleLabelSelector'] });
      tiers.push(tier(`fallbackStrategy[${i}].bundles`, f.bundles, f.bundleLabelSelector));
    });
  }
  const rare: Record<string, Toleration> = {};
  for (const b of tiers.flat()) Object.assign(rare, rareResourceTolerations(b.resources, ctx.rareResources ?? []));
  const tolerations: Record<string, Toleration> = { ...rare, ...compileTolerations('tolerations', opts.tolerations) };
  const name = ctx.name ?? opts.name;
  return { target: ctx.id ? { kind: 'placement_group', id: ctx.id, name } : undefined, strategy, tiers, tolerations };
}

function tier(option: string, bundles: unknown, selectors: unknown): BundleSpec[] {
  if (!Array.isArray(bundles) || bundles.length === 0) throw new InvalidOptionError(option, bundles, 'expected a non-empty array of bundles');
  if (selectors !== undefined && (!Array.isArray(selectors) || selectors.length !== bundles.length)) {
    throw new InvalidOptionError(option.replace(/bundles$/, 'bundleLabelSelector'), selectors, `expected one selector per bundle (${bundles.length})`);
  }
  return bundles.map((b, i) => {
    const where = `${option}[${i}]`;
    if (b === null || typeof b !== 'object' || Array.isArray(b)) throw new InvalidOptionError(where, b, 'expected an object of resource name to quantity');
    for (const [name, amount] of Object.entries(b)) {
      if (typeof amount === 'number' && amount <= 0) throw new InvalidOptionError(`${where}.${name}`, amount, 'bundle resources must be positive');
    }
    const resources = parseResources(b, where);
    if (Object.keys(resources).length === 0) throw new InvalidOptionError(where, b, 'a bundle must reserve at least one resource');
    const selector = selectors === undefined ? [] : parseLabelSelector((selectors as unknown[])[i] ?? {});
    return { resources, selector };
  });
}
