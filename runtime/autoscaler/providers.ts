import { CommandProvider } from './command-provider.ts';
import type { AutoscalerConfig } from './config.ts';
import { LocalProvider } from './local-provider.ts';
import type { NodeProvider } from './provider.ts';

/** The provider the config names. */
export function providerFor(config: AutoscalerConfig, opts: { address: string; env?: NodeJS.ProcessEnv }): NodeProvider {
  const p = config.provider;
  if (p.type === 'local') return new LocalProvider({ cluster: config.cluster, env: opts.env });
  return new CommandProvider({ launch: p.launch, terminate: p.terminate, list: p.list, timeoutSeconds: p.timeoutSeconds, address: opts.address, cluster: config.cluster, env: opts.env });
}
