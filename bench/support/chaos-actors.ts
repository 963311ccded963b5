// The actor class of the chaos run. Exported under its own name from this module, so worker hosts
// load it by this module's URL.
import { randomUUID } from 'node:crypto';
import { defineActor, getRuntimeContext } from '../../runtime/index.ts';

export class ChaosActor {
  private calls = 0;
  /** Random per construction: tells incarnations apart, even within one process. */
  private readonly incarnation = randomUUID();
  /** Where this incarnation runs: the duplicate check asks every live incarnation. */
  where(): { nodeId: string; pid: number } {
    this.calls++;
    return { nodeId: getRuntimeContext().nodeId, pid: process.pid };
  }
  /** Which incarnation answered (the freeze fault's caller records every answer). */
  answer(): { nodeId: string; pid: number; incarnation: string; calls: number } {
    return { nodeId: getRuntimeContext().nodeId, pid: process.pid, incarnation: this.incarnation, calls: ++this.calls };
  }
  count(): number {
    return this.calls;
  }
}

export const ChaosActorClass = defineActor(import.meta.url, ChaosActor);
