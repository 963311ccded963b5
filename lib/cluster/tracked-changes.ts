/**
 * What ClusterState records, per node, of the changes a reader asked it to track: the resource names
 * that changed (`trackResourceChanges`) and how actor-label counts moved (`trackActorLabelChanges`).
 * The GCS's view broadcaster takes them each period to send what changed instead of comparing
 * everything. Both are maps keyed by node id; ClusterState sets, reads and deletes entries directly.
 */
import type { ResourceSet } from '../resources/resource-set.ts';
import { addLabelCount, type ActorLabelCounts } from './actor-label-counts.ts';
import type { PlacedActor } from './sched-node.ts';

/** Per node, the resource names changed since last taken ('all': the sets were replaced). */
export class ChangedResourceNames extends Map<string, Set<string> | 'all'> {
  /** The node's set of changed names, started when it has none; undefined when its sets were replaced ('all'). */
  namesOf(id: string): Set<string> | undefined {
    let changed = this.get(id);
    if (changed === 'all') return undefined;
    if (!changed) this.set(id, (changed = new Set()));
    return changed;
  }

  /** Notes the names of `names` as changed on node `id`. */
  note(id: string, names: ResourceSet): void {
    const changed = this.namesOf(id);
    if (changed) for (const name in names) changed.add(name);
  }
}

/** Per node, the actor-label count changes since last taken, zeros kept (a count that moved and came back). */
export class ActorLabelChanges extends Map<string, ActorLabelCounts> {
  /** An actor placed on (+1) or gone from (-1) node `id`: each of its labels' counts moves by `sign`. */
  note(id: string, actor: PlacedActor, sign: 1 | -1): void {
    let changes = this.get(id);
    if (!changes) this.set(id, (changes = new Map()));
    for (const key in actor.labels) addLabelCount(changes, [actor.namespace, key, actor.labels[key], sign], { keepZero: true });
  }
}
