import { formatResources, fits, shortOf, type ResourceSet } from '../../lib/resources/resource-set.ts';
import { bundleResourceName } from '../../lib/scheduling/bundle-resources.ts';
import type { BundleRef, CommitResult, PrepareBundle, PrepareResult } from '../../protocols/messages/placement-group.ts';
import type { Leases } from './leases.ts';

/** Longest resource name the wire carries (protocols/messages/common.ts, `resourceSet` keys). */
const MAX_RESOURCE_NAME = 128;

interface HeldBundle {
  readonly pgId: string;
  readonly index: number;
  /** The raw resources the bundle holds (its lease), in units. */
  readonly resources: ResourceSet;
  /** Once committed: the bundle resources it added to the node's total. */
  added?: ResourceSet;
}

/** The lease holder of a bundle: its raw resources are held under this key beside actors and tasks. */
export function bundleHolder(pgId: string, index: number): string {
  return `bundle/${pgId}/${index}`;
}

/**
 * The placement-group bundles one raylet holds — its half of the GCS's two-phase commit
 * (docs/runtime.md, "Placement-group bundles on the raylet"):
 *
 *   prepare  the bundle's raw resources (CPU, GPU, …) are leased under `bundle/<pgId>/<index>` when
 *            they fit in what is free here now, so no task or actor can take them meanwhile
 *   commit   the node's total gains the bundle resources (`CPU_group_<pg>` and `CPU_group_<i>_<pg>`
 *            for each resource of the bundle) that actors and tasks of the group ask for instead;
 *            the raw resources stay leased by the bundle
 *   cancel   the lease goes (the raw resources come back) and so do the bundle resources
 *
 * Every step is idempotent, as the GCS may send one again after a lost reply. Whatever an actor or
 * task of a cancelled bundle still holds stays in Leases until it is released (the GCS kills a
 * removed group's actors first); Leases never counts it against a resource the node no longer has.
 */
export class LocalBundles {
  private readonly held = new Map<string, HeldBundle>();

  constructor(
    private readonly leases: Leases,
    private readonly nodeId: string,
  ) {}

  /** How many bundles are held here, and how many of them are committed. */
  stats(): { prepared: number; committed: number } {
    let committed = 0;
    for (const bundle of this.held.values()) if (bundle.added) committed++;
    return { prepared: this.held.size - committed, committed };
  }

  /** Holds each bundle that fits, in order (each one held leaves less for the next); the rest are refused with why. */
  prepare(body: PrepareBundle): PrepareResult {
    const refused: PrepareResult['refused'] = [];
    this.leases.batch(() => {
      for (const { pgId, index, resources } of body.bundles) {
        const holder = bundleHolder(pgId, index);
        if (this.held.has(holder)) continue;
        const reason = this.whyNot(pgId, index, resources);
        if (reason !== undefined) {
          refused.push({ pgId, index, reason });
          continue;
        }
        this.leases.acquire(holder, resources);
        this.held.set(holder, { pgId, index, resources });
      }
    });
    return { refused };
  }

  /** Prepared bundles become bundle resources on this node; a bundle not held here is `missing`. */
  commit(bundles: readonly BundleRef[]): CommitResult {
    const missing: BundleRef[] = [];
    this.leases.batch(() => {
      for (const { pgId, index } of bundles) {
        const bundle = this.held.get(bundleHolder(pgId, index));
        if (!bundle) {
          missing.push({ pgId, index });
          continue;
        }
        if (bundle.added) continue;
        bundle.added = bundleResources(bundle);
        this.leases.addTotal(bundle.added);
      }
    });
    return { missing };
  }

  /** Gives back what these bundles hold (prepared or committed); `returned` counts those that were held. */
  cancel(bundles: readonly BundleRef[]): { returned: number } {
    let returned = 0;
    this.leases.batch(() => {
      for (const { pgId, index } of bundles) {
        if (this.drop(bundleHolder(pgId, index))) returned++;
      }
    });
    return { returned };
  }

  /** Every bundle held here: what a registration tells the GCS (it cancels those it does not keep). */
  list(): { pgId: string; index: number; committed: boolean }[] {
    return [...this.held.values()].map((b) => ({ pgId: b.pgId, index: b.index, committed: b.added !== undefined }));
  }

  /** The GCS forgot this node, and with it the groups' bundles here (it places them again elsewhere). */
  forgetAll(): number {
    const n = this.held.size;
    this.leases.batch(() => {
      for (const holder of [...this.held.keys()]) this.drop(holder);
    });
    return n;
  }

  private drop(holder: string): boolean {
    const bundle = this.held.get(holder);
    if (!bundle) return false;
    this.held.delete(holder);
    if (bundle.added) this.leases.removeTotal(bundle.added);
    this.leases.release(holder);
    return true;
  }

  /** Why a bundle cannot be held here now, or undefined when it can. */
  private whyNot(pgId: string, index: number, resources: ResourceSet): string | undefined {
    const what = `bundle ${index} of placement group ${pgId}`;
    const tooLong = Object.keys(resources).find((name) => bundleResourceName(name, pgId, index).length > MAX_RESOURCE_NAME);
    if (tooLong !== undefined) {
      return `${what}: its resource name ${bundleResourceName(tooLong, pgId, index)} would be longer than ${MAX_RESOURCE_NAME} characters`;
    }
    const free = this.leases.availableNow();
    if (fits(free, resources)) return undefined;
    const short = shortOf(free, resources);
    const need = formatResources(pick(resources, short));
    const have = formatResources(pick(free, short));
    const parts = short.map((name) => (Object.hasOwn(this.leases.total, name) ? `${name} ${need[name]}, ${have[name] ?? 0} free` : `${name} ${need[name]}, none on this node`));
    return `${what} needs ${parts.join('; ')} (node ${this.nodeId})`;
  }
}

/** The bundle resources a committed bundle adds: `R_group_<pg>` and `R_group_<i>_<pg>` for each resource R it holds. */
export function bundleResources(bundle: { pgId: string; index: number; resources: ResourceSet }): ResourceSet {
  const out: Record<string, number> = {};
  for (const name in bundle.resources) {
    const units = bundle.resources[name];
    if (units <= 0) continue;
    const any = bundleResourceName(name, bundle.pgId);
    out[any] = (out[any] ?? 0) + units;
    out[bundleResourceName(name, bundle.pgId, bundle.index)] = units;
  }
  return out;
}

function pick(set: ResourceSet, names: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of names) out[name] = set[name] ?? 0;
  return out;
}
