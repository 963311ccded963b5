import { CLUSTER_EVENT_TYPES } from '../../../protocols/messages/cluster.ts';
import type { Subscription } from 'rxjs';
import type { ClusterEvent } from '../../client/cluster-info.types.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, connectForCommand } from '../connection.ts';
import { describeEvent } from '../event-format.ts';
import type { CliIo } from '../io.ts';

const FLAGS = { address: 'string', cluster: 'string', follow: 'boolean', type: 'string', json: 'boolean', limit: 'string' } as const;

/** The event types --type takes: protocols' one list. */
export const EVENT_TYPES = CLUSTER_EVENT_TYPES;
const DEFAULT_LIMIT = 1000;

/**
 * `orrery events [--follow] [--type T[,T2]] [--json] [--limit N]`: the GCS's recent events (its
 * ring of the last 10,000; at most the newest N, default 1,000), oldest first, one per line — text,
 * or with --json one JSON object per line (the ClusterEvent of the client API). With --follow it
 * then prints every new event as it is published until SIGINT/SIGTERM (exit 0) or the connection is
 * lost (exit 1). History and the live stream are joined by each event's `seq`: the subscription is
 * opened before the history is read, so nothing in between is missed or printed twice.
 */
export async function events(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('events', argv, FLAGS);
  const types = typesOf(stringFlag(args, 'type'));
  const limit = limitOf(stringFlag(args, 'limit'));
  const follow = args.flags.follow === true;
  const json = args.flags.json === true;
  const address = addressOf('events', args, io.env)!;
  const cluster = clusterOf('events', args, io.env);
  const print = (event: ClusterEvent): void => io.out(json ? JSON.stringify(event) : describeEvent(event));
  const wanted = (event: ClusterEvent): boolean => types === undefined || types.includes(event.type);

  const client = await connectForCommand(address, cluster, io.access);
  let live: Subscription | undefined;
  try {
    const buffered: ClusterEvent[] = [];
    let printedUpTo: number | undefined;
    let ended: (code: number) => void = () => undefined;
    const done = new Promise<number>((resolve) => (ended = resolve));
    if (follow) {
      live = client.events$.subscribe({
        next: (event) => {
          if (!wanted(event)) return;
          if (printedUpTo === undefined) buffered.push(event);
          else if (event.seq === undefined || event.seq > printedUpTo) print(event);
        },
        complete: () => {
          io.err('orrery: events: the connection to the cluster ended');
          ended(1);
        },
      });
    }
    const recent = await client.recentEvents({ ...(types ? { types: [...types] } : {}), limit });
    if (recent.omitted > 0 && !json) io.err(`(${recent.omitted} older event(s) not shown)`);
    for (const event of recent.events) print(event);
    if (!follow) return 0;
    io.err(`following the events of cluster ${JSON.stringify(cluster)} at ${address} (Ctrl-C to stop)`);
    printedUpTo = recent.lastSeq;
    for (const event of buffered.splice(0)) if (event.seq === undefined || event.seq > recent.lastSeq) print(event);
    return await untilStopped(done, io);
  } finally {
    live?.unsubscribe();
    await client.close();
  }
}

function typesOf(text: string | undefined): readonly string[] | undefined {
  if (text === undefined) return undefined;
  const types = text.split(',').map((t) => t.trim());
  for (const t of types) {
    if (!(EVENT_TYPES as readonly string[]).includes(t)) {
      throw new UsageError(`events: --type: unknown event type ${JSON.stringify(t)} (expected ${EVENT_TYPES.join(', ')})`, '--type');
    }
  }
  return types;
}

function limitOf(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIMIT;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1 || n > 100_000) throw new UsageError(`events: --limit: expected a whole number from 1 to 100000, got ${JSON.stringify(text)}`, '--limit');
  return n;
}

/** Resolves 0 on SIGINT / SIGTERM (or io.signal), or with `done`'s code when the stream ends. */
export function untilStopped(done: Promise<number>, io: CliIo): Promise<number> {
  return new Promise<number>((resolve) => {
    const stop = (): void => finish(0);
    const finish = (code: number): void => {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
      resolve(code);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (io.signal?.aborted) return finish(0);
    io.signal?.addEventListener('abort', stop, { once: true });
    void done.then(finish);
  });
}
