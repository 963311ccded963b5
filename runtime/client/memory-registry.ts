import { randomBytes } from 'node:crypto';
import type { MemoryBroker } from '../bus/memory.ts';

/**
 * In-process brokers that `connect({ address: 'memory://<id>' })` can reach: startLocalCluster with
 * the memory transport registers its broker here for as long as the cluster runs.
 */
const brokers = new Map<string, MemoryBroker>();

export const MEMORY_SCHEME = 'memory://';

export function registerMemoryBroker(broker: MemoryBroker): { address: string; unregister(): void } {
  const id = randomBytes(6).toString('hex');
  brokers.set(id, broker);
  return { address: `${MEMORY_SCHEME}${id}`, unregister: () => brokers.delete(id) };
}

export function lookupMemoryBroker(address: string): MemoryBroker | undefined {
  return address.startsWith(MEMORY_SCHEME) ? brokers.get(address.slice(MEMORY_SCHEME.length)) : undefined;
}
