// The actor class the examples place. It lives in a module of its own with no top-level side
// effects, because every worker host imports this module by URL to construct it.
import { defineActor, getRuntimeContext } from 'orrery';

export class Service {
  constructor(readonly role = 'service') {}

  /** Where this actor runs: the node's id, name and labels. */
  where(): { nodeId: string; nodeName: string; labels: Record<string, string> } {
    const { nodeId, nodeName, labels } = getRuntimeContext();
    return { nodeId, nodeName, labels };
  }

  ping(): string {
    return `${this.role}: pong`;
  }
}

export const ServiceActor = defineActor(import.meta.url, Service);
