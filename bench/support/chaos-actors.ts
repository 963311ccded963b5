// The actor class of the chaos run. Exported under its own name from this module, so worker hosts
// load it by this module's URL.
import { defineActor, getRuntimeContext } from '../../runtime/index.ts';

export class ChaosActor {
  private calls = 0;
  /** Where this incarnation runs: the duplicate check asks every live incarnation. */
  where(): { nodeId: string; pid: number } {
    this.calls++;
    return { nodeId: getRuntimeContext().nodeId, pid: process.pid };
  }
  count(): number {
    return this.calls;
  }
}

export const ChaosActorClass = defineActor(import.meta.url, ChaosActor);
