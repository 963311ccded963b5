import { addResources, subtractResources, type ResourceSet } from '../../lib/resources/resource-set.ts';

/**
 * The resources the actors of this node hold, in units. The GCS decides placements, so a lease is
 * never refused here; what remains (never below zero) is what heartbeats report as available.
 */
export class Leases {
  private readonly held = new Map<string, ResourceSet>();
  private used: Record<string, number> = {};

  constructor(readonly total: ResourceSet) {}

  acquire(actorId: string, resources: ResourceSet): void {
    this.release(actorId);
    this.held.set(actorId, resources);
    this.used = addResources(this.used, resources);
  }

  release(actorId: string): void {
    const resources = this.held.get(actorId);
    if (!resources) return;
    this.held.delete(actorId);
    this.used = subtractResources(this.used, resources);
  }

  clear(): void {
    this.held.clear();
    this.used = {};
  }

  get count(): number {
    return this.held.size;
  }

  /** Total minus what the leases hold, per resource of the node, clamped at zero. */
  available(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, units] of Object.entries(this.total)) out[name] = Math.max(0, units - (this.used[name] ?? 0));
    return out;
  }
}
