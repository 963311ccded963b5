import { nodeInfo } from '../../protocols/messages/cluster.ts';
import { subjects } from '../../protocols/subjects.ts';
import type { Bus } from '../bus/bus.ts';
import { connectNatsBus } from '../bus/nats-connect.ts';
import type { NatsAccess } from '../process/flags.ts';
import { GcsClient } from '../client/gcs-client.ts';
import type { AutoscalerGcs } from './autoscaler.ts';

/** The GCS verbs the autoscaler uses, over a bus (the autoscaler runs with the admin role's credentials). */
export function autoscalerGcs(bus: Bus, opts: { cluster: string; address: string; timeoutMs?: number }): AutoscalerGcs {
  const client = new GcsClient(bus, subjects(opts.cluster), { address: opts.address, timeoutMs: opts.timeoutMs ?? 10_000 });
  return {
    resourceDemands: (limit) => client.resourceDemands(limit),
    autoscalerReport: (status, events) => client.autoscalerReport(status, events),
    drainNode: async (nodeId) => void (await client.request('drain_node', { nodeId }, nodeInfo)),
  };
}

/** A NATS connection of its own and the autoscaler's GCS verbs over it; `close` ends the connection. */
export async function connectAutoscalerGcs(opts: { address: string; cluster: string; access?: NatsAccess }): Promise<AutoscalerGcs & { close(): Promise<void> }> {
  const bus = await connectNatsBus({ servers: opts.address, name: `orrery-autoscaler-${opts.cluster}`, ...opts.access });
  return { ...autoscalerGcs(bus, opts), close: () => bus.close() };
}
