import { isBundleResourceName } from '../../protocols/messages/cluster.ts';
import { MAX_RESOURCE_NAMES } from '../../protocols/messages/common.ts';
import { fits, subtractResources, type ResourceSet } from '../../lib/resources/resource-set.ts';

/**
 * The resources held on this node, in units: by each actor the GCS placed here, by each task
 * running here (keyed `task/<taskId>`, so the kinds never collide), and by each placement-group
 * bundle prepared here (`bundle/<pgId>/<index>`, bundles.ts). The GCS decides where actors go, so an
 * actor's lease is never refused here; the raylet grants a task's lease only when its own view of
 * this node says it fits. What remains (never below zero) is what heartbeats report as available and
 * what the raylet's task decisions see of this node.
 *
 * The total is not fixed: a committed bundle adds its bundle resources (`CPU_group_<pg>`, …) to it
 * and a cancelled one takes them away again (`addTotal` / `removeTotal`). A holder may still hold
 * bundle resources that have left the total (an actor of a removed group the GCS has not killed yet):
 * its release only lowers what is used, which is never below zero, and `available` never counts a
 * name the total does not have.
 *
 * Every change is made in place, in time proportional to the resources it names, not to the node's:
 * a node holding the bundles of a thousand groups has thousands of resource names, and copying them
 * on every prepare, commit and lease made group creation quadratic (bench:pg). So `total`, `used()`
 * and `availableNow()` are live objects (read them, do not keep them as a picture), `totalVersion`
 * says when the total changed, and `takeChanged()` names what changed since it was last called, for
 * a reader that keeps its own copy (the raylet's view of this node).
 */
export class Leases {
  private readonly held = new Map<string, ResourceSet>();
  private readonly usedUnits: Record<string, number> = {};
  private readonly totalUnits: Record<string, number>;
  /** `totalUnits` minus `usedUnits` per name of the total, clamped at zero. */
  private readonly freeUnits: Record<string, number>;
  /** The same without placement-group bundle resources (`withoutBundles`): a handful of names. */
  private readonly ownFreeUnits: Record<string, number>;
  /** How many names `freeUnits` has: counting them per change made a thousand commits quadratic. */
  private freeNames: number;
  /** Names whose total or available changed since `takeChanged`; 'all' once there are too many to list. */
  private changedNames: Set<string> | 'all' = new Set();
  private totalChanges = 0;
  /** > 0 inside `batch`: changes are announced once, when the outermost batch ends. */
  private batching = 0;
  private changed = false;

  /** `onChange` runs after every acquire, release, clear and total change that changed something. */
  constructor(total: ResourceSet, private readonly onChange: () => void = () => {}) {
    this.totalUnits = { ...total };
    this.freeUnits = { ...total };
    this.freeNames = Object.keys(this.freeUnits).length;
    this.ownFreeUnits = withoutBundles(this.freeUnits);
  }

  /** What the node has in all: its own resources plus those of the bundles committed here. Live: changes in place. */
  get total(): ResourceSet {
    return this.totalUnits;
  }

  /** Counts the changes of `total`: a reader that saw another count has an outdated total. */
  get totalVersion(): number {
    return this.totalChanges;
  }

  acquire(holder: string, resources: ResourceSet): void {
    this.drop(holder);
    this.held.set(holder, resources);
    for (const name in resources) {
      this.usedUnits[name] = (this.usedUnits[name] ?? 0) + resources[name];
      this.refresh(name);
    }
    this.changedNow();
  }

  release(holder: string): void {
    if (this.drop(holder)) this.changedNow();
  }

  clear(): void {
    if (this.held.size === 0) return;
    this.held.clear();
    for (const name in this.usedUnits) {
      delete this.usedUnits[name];
      this.refresh(name);
    }
    this.changedNow();
  }

  /** The node gains these resources (a committed bundle's). */
  addTotal(resources: ResourceSet): void {
    if (Object.keys(resources).length === 0) return;
    for (const name in resources) {
      this.totalUnits[name] = (this.totalUnits[name] ?? 0) + resources[name];
      this.refresh(name);
    }
    this.totalChanges++;
    this.changedNow();
  }

  /** The node loses these resources (a cancelled bundle's); a name that reaches zero leaves the total. */
  removeTotal(resources: ResourceSet): void {
    if (Object.keys(resources).length === 0) return;
    for (const name in resources) {
      const left = (this.totalUnits[name] ?? 0) - resources[name];
      if (left > 0) this.totalUnits[name] = left;
      else delete this.totalUnits[name];
      this.refresh(name);
    }
    this.totalChanges++;
    this.changedNow();
  }

  /**
   * Runs `fn` and announces what it changed once, at the end: a prepare or commit of a thousand
   * bundles is one view update and one load report, not a thousand.
   */
  batch<T>(fn: () => T): T {
    this.batching++;
    try {
      return fn();
    } finally {
      if (--this.batching === 0 && this.changed) {
        this.changed = false;
        this.onChange();
      }
    }
  }

  has(holder: string): boolean {
    return this.held.has(holder);
  }

  get count(): number {
    return this.held.size;
  }

  /** What the leases hold together, per resource. Live: changes in place. */
  used(): Readonly<Record<string, number>> {
    return this.usedUnits;
  }

  /** Total minus what the leases hold, per resource of the node, clamped at zero: a copy. */
  available(): Record<string, number> {
    return { ...this.freeUnits };
  }

  /** The same as `available()`, live (changes in place): for a look now, without copying every name. */
  availableNow(): Readonly<Record<string, number>> {
    return this.freeUnits;
  }

  /** `withoutBundles(available())`, as load reports carry it, without going through every bundle resource: a copy. */
  availableWithoutBundles(): Record<string, number> {
    return { ...this.ownFreeUnits };
  }

  /**
   * The names whose total or available changed since the last call ('all' when too many changed to
   * list), and starts a new list.
   */
  takeChanged(): ReadonlySet<string> | 'all' {
    const changed = this.changedNames;
    this.changedNames = new Set();
    return changed;
  }

  private changedNow(): void {
    if (this.batching > 0) this.changed = true;
    else this.onChange();
  }

  /** Recomputes what is free of `name` and notes the name as changed. */
  private refresh(name: string): void {
    const bundle = isBundleResourceName(name);
    if (Object.hasOwn(this.totalUnits, name)) {
      if (!Object.hasOwn(this.freeUnits, name)) this.freeNames++;
      this.freeUnits[name] = Math.max(0, this.totalUnits[name] - (this.usedUnits[name] ?? 0));
      if (!bundle) this.ownFreeUnits[name] = this.freeUnits[name];
    } else if (Object.hasOwn(this.freeUnits, name)) {
      this.freeNames--;
      delete this.freeUnits[name];
      if (!bundle) delete this.ownFreeUnits[name];
    }
    if (this.changedNames === 'all') return;
    this.changedNames.add(name);
    // nobody is taking the list (or far behind): past the node's own size it says no more than 'all'
    if (this.changedNames.size > 1024 && this.changedNames.size > 2 * this.freeNames) this.changedNames = 'all';
  }

  private drop(holder: string): boolean {
    const resources = this.held.get(holder);
    if (!resources) return false;
    this.held.delete(holder);
    if (!fits(this.usedUnits, resources)) subtractResources(this.usedUnits, resources); // throws the precise error
    for (const name in resources) {
      const left = (this.usedUnits[name] ?? 0) - resources[name];
      // names nobody holds any more leave, so the bundle resources of many groups do not pile up here
      if (left <= 0) delete this.usedUnits[name];
      else this.usedUnits[name] = left;
      this.refresh(name);
    }
    return true;
  }
}

/** `total` minus `used` for every resource of `total`, clamped at zero. */
export function remaining(total: ResourceSet, used: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, units] of Object.entries(total)) out[name] = Math.max(0, units - (used[name] ?? 0));
  return out;
}

/**
 * `available` without placement-group bundle resources, as heartbeats and load reports carry it. A
 * node holding a thousand groups has thousands of bundle resource names; sending them all every
 * 20 ms (load) to every other raylet cost them most of their CPU in decoding (bench:pg). Bundle
 * resources reach the cluster through the GCS's view (their totals, and what actors hold); what this
 * node's own tasks hold of them is known here, where tasks in bundles are decided.
 */
export function withoutBundles(available: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name in available) if (!isBundleResourceName(name)) out[name] = available[name];
  return out;
}


/** Most resource names one set may carry on the wire (protocols/messages/common.ts, `resourceSet`). */
export const MAX_WIRE_RESOURCES = MAX_RESOURCE_NAMES;

/**
 * `available` as heartbeats and load reports may carry it: a node holding the bundles of hundreds of
 * placement groups has more resource names than a wire resource set takes, and a heartbeat the GCS
 * cannot decode would get the node declared dead. Past the limit the node's own resources go first and
 * bundle resources fill what room is left; a name left out only means a reader does not lower its
 * copy of this node for it (the view's own totals still hold).
 */
export function forWire(available: Record<string, number>): Record<string, number> {
  const names = Object.keys(available);
  if (names.length <= MAX_WIRE_RESOURCES) return available;
  const bundle = isBundleResourceName;
  const out: Record<string, number> = {};
  for (const name of [...names.filter((n) => !bundle(n)), ...names.filter(bundle)].slice(0, MAX_WIRE_RESOURCES)) out[name] = available[name];
  return out;
}
