import { actorInfo, type ActorInfoWire } from '../../../protocols/messages/actor.ts';
import { ActorNotFoundError } from '../../errors.ts';
import type { ClusterClient } from '../../client/cluster.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, withCluster } from '../connection.ts';
import type { CliIo } from '../io.ts';

const FLAGS = { address: 'string', cluster: 'string', namespace: 'string', restart: 'boolean', json: 'boolean' } as const;
/** What an actor id looks like (runtime/client/actor-builder.ts, newActorId). */
const ACTOR_ID = /^[0-9a-f]{16}$/;

/**
 * `orrery kill ACTOR [--namespace NS] [--restart]`: kills one actor — a detached one lives until
 * this (docs/jobs.md). ACTOR is an actor id, or a name in `--namespace` (default "default"); a
 * string shaped like an id is tried as one first, then as a name. Without `--restart` the actor is
 * DEAD for good and its name free (Ray's `ray.kill(no_restart=True)`); with it, it restarts when its
 * maxRestarts allows. Answers once its raylet dropped it; prints the actor after.
 */
export async function kill(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('kill', argv, FLAGS, 1);
  const target = args.positionals[0];
  if (target === undefined) throw new UsageError('kill: expected the actor to kill: its id or its name');
  const namespace = stringFlag(args, 'namespace') ?? 'default';
  const address = addressOf('kill', args, io.env)!;
  const cluster = clusterOf('kill', args, io.env);
  const noRestart = args.flags.restart !== true;
  await withCluster(address, cluster, async (client) => {
    const { gcs } = client as ClusterClient;
    const found = await find(target, namespace, (query) => gcs.request('get_actor', query, actorInfo));
    const after = await gcs.request('kill_actor', { actorId: found.actorId, noRestart }, actorInfo);
    if (args.flags.json === true) io.out(JSON.stringify(after, null, 2));
    else io.out(`actor ${after.actorId}${after.name ? ` (${after.namespace}/${after.name})` : ''} ${after.className}: ${after.state}`);
  }, io.access);
  return 0;
}

async function find(target: string, namespace: string, get: (q: { actorId?: string; name?: string; namespace?: string }) => Promise<ActorInfoWire>): Promise<ActorInfoWire> {
  if (ACTOR_ID.test(target)) {
    try {
      return await get({ actorId: target });
    } catch (err) {
      if (!(err instanceof ActorNotFoundError)) throw err;
    }
  }
  return get({ name: target, namespace });
}
