// runtime/local — a whole cluster started from one call: in this process (memory transport) or as
// real GCS and raylet processes on NATS.
import { startMemoryCluster } from './memory-cluster.ts';
import { findNatsServer } from './nats-server.ts';
import { startProcessCluster } from './process-cluster.ts';
import type { LocalCluster, LocalClusterOptions } from './local-cluster.types.ts';
import { InvalidOptionError } from '../../lib/errors.ts';

export type { LocalCluster, LocalClusterOptions, NodeSpec, Transport } from './local-cluster.types.ts';
export { NatsServerMissingError, findNatsServer, startNatsServer, type NatsServerHandle, type NatsServerOptions } from './nats-server.ts';

/**
 * Starts a cluster with one raylet per node spec and returns a connected client. Without a
 * transport: 'nats' when an address is given or a nats-server binary is available, else 'memory'.
 */
export function startLocalCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  if (opts === null || typeof opts !== 'object' || !Array.isArray(opts.nodes)) {
    return Promise.reject(new InvalidOptionError('nodes', opts?.nodes, 'expected an array of node specs'));
  }
  const transport = opts.transport ?? (opts.address !== undefined || findNatsServer() ? 'nats' : 'memory');
  if (transport === 'memory') {
    if (opts.address !== undefined) return Promise.reject(new InvalidOptionError('address', opts.address, "applies only to transport 'nats'"));
    if (opts.auth !== undefined && opts.auth !== false) return Promise.reject(new InvalidOptionError('auth', opts.auth, "applies only to transport 'nats' (the memory transport has no one else on its bus)"));
    return startMemoryCluster(opts);
  }
  if (transport === 'nats') return startProcessCluster(opts);
  return Promise.reject(new InvalidOptionError('transport', transport, "expected 'nats' or 'memory'"));
}
