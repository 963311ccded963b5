import { addResources, subtractResources, type ResourceSet } from '../../lib/resources/resource-set.ts';

/**
 * The resources held on this node, in units: by each actor the GCS placed here, and by each task
 * running here (keyed `task/<taskId>`, so the two kinds never collide). The GCS decides where actors
 * go, so an actor's lease is never refused here; the raylet grants a task's lease only when its own
 * view of this node says it fits. What remains (never below zero) is what heartbeats report as
 * available and what the raylet's task decisions see of this node.
 */
export class Leases {
  private readonly held = new Map<string, ResourceSet>();
  private usedUnits: Record<string, number> = {};

  /** `onChange` runs after every acquire, release and clear that changed something. */
  constructor(readonly total: ResourceSet, private readonly onChange: () => void = () => {}) {}

  acquire(holder: string, resources: ResourceSet): void {
    this.drop(holder);
    this.held.set(holder, resources);
    this.usedUnits = addResources(this.usedUnits, resources);
    this.onChange();
  }

  release(holder: string): void {
    if (this.drop(holder)) this.onChange();
  }

  clear(): void {
    if (this.held.size === 0) return;
    this.held.clear();
    this.usedUnits = {};
    this.onChange();
  }

  get count(): number {
    return this.held.size;
  }

  /** What the leases hold together, per resource. */
  used(): Readonly<Record<string, number>> {
    return this.usedUnits;
  }

  /** Total minus what the leases hold, per resource of the node, clamped at zero. */
  available(): Record<string, number> {
    return remaining(this.total, this.usedUnits);
  }

  private drop(holder: string): boolean {
    const resources = this.held.get(holder);
    if (!resources) return false;
    this.held.delete(holder);
    this.usedUnits = subtractResources(this.usedUnits, resources);
    return true;
  }
}

/** `total` minus `used` for every resource of `total`, clamped at zero. */
export function remaining(total: ResourceSet, used: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, units] of Object.entries(total)) out[name] = Math.max(0, units - (used[name] ?? 0));
  return out;
}
