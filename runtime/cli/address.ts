import { DEFAULT_ADDRESS } from '../bus/address.ts';
import { UsageError, stringFlag, type ParsedArgs } from './args.ts';

const SCHEMES = new Set(['nats:', 'tls:', 'ws:', 'wss:']);

/**
 * The NATS address of a command: --address, else ORRERY_ADDRESS, else `fallback`. Each
 * comma-separated entry must be a NATS URL (`nats://host:port`) or `host:port`; a bad one is a
 * UsageError naming where it came from. `fallback` null: no default, undefined when neither is set.
 */
export function addressOf(command: string, args: ParsedArgs, env: NodeJS.ProcessEnv, fallback: string | null = DEFAULT_ADDRESS): string | undefined {
  const flag = stringFlag(args, 'address');
  const [value, source] = flag !== undefined ? [flag, '--address'] : env.ORRERY_ADDRESS ? [env.ORRERY_ADDRESS, 'ORRERY_ADDRESS'] : [fallback, ''];
  if (value === null) return undefined;
  for (const part of value.split(',').map((p) => p.trim())) {
    const problem = urlProblem(part);
    if (problem) throw new UsageError(`${command}: ${source}: ${JSON.stringify(part)} ${problem}`, source);
  }
  return value;
}

function urlProblem(part: string): string | undefined {
  if (part === '') return 'is empty (expected nats://host:port)';
  let url: URL;
  try {
    url = new URL(part.includes('://') ? part : `nats://${part}`);
  } catch {
    return 'is not a NATS URL (expected nats://host:port)';
  }
  if (!SCHEMES.has(url.protocol)) return `has scheme ${url.protocol.replace(':', '')}; expected nats, tls, ws or wss`;
  if (url.hostname === '') return 'has no host (expected nats://host:port)';
  return undefined;
}

/** The first server of an address as host and port, for reachability checks. */
export function firstServer(address: string): { host: string; port: number } {
  const part = address.split(',')[0].trim();
  const url = new URL(part.includes('://') ? part : `nats://${part}`);
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : 4222 };
}
