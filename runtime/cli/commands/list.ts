import type { ActorState } from '../../client/cluster-info.types.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, withCluster } from '../connection.ts';
import { extraLabels, pairs, placementGroupTable, resourceUse, table } from '../format.ts';
import type { CliIo } from '../io.ts';

const FLAGS = { address: 'string', cluster: 'string', json: 'boolean', state: 'string' } as const;
const ACTOR_STATES: readonly ActorState[] = ['DEPENDENCIES_UNREADY', 'PENDING', 'SCHEDULED', 'ALIVE', 'RESTARTING', 'DEAD'];
const KINDS = ['nodes', 'actors', 'placement-groups'] as const;
const kindList = `${KINDS.slice(0, -1).join(', ')} or ${KINDS[KINDS.length - 1]}`;

/**
 * `orrery list nodes|actors|placement-groups [--json]`, and `orrery list actors --state S[,S2]` for
 * actors in those states only (filtered by the GCS). Each list walks the GCS's pages.
 */
export async function list(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('list', argv, FLAGS, 1);
  const kind = args.positionals[0];
  if (kind === undefined) throw new UsageError(`list: expected what to list: ${kindList}`);
  if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`list: cannot list ${JSON.stringify(kind)}; expected ${kindList}`);
  const address = addressOf('list', args, io.env)!;
  const cluster = clusterOf('list', args, io.env);
  const json = args.flags.json === true;
  const states = statesOf(stringFlag(args, 'state'));
  if (states !== undefined && kind !== 'actors') throw new UsageError('list: --state: only actors are listed by state', '--state');
  await withCluster(address, cluster, async (client) => {
    if (kind === 'nodes') {
      const nodes = await client.nodes();
      if (json) return io.out(JSON.stringify(nodes, null, 2));
      const rows = nodes.map((n) => [n.nodeId, n.name, n.state, resourceUse(n), pairs(extraLabels(n)), pairs(n.taints)]);
      for (const line of table(['NODE_ID', 'NAME', 'STATE', 'RESOURCES (used/total)', 'LABELS', 'TAINTS'], rows)) io.out(line);
      return;
    }
    if (kind === 'placement-groups') {
      const groups = await client.placementGroups();
      if (json) return io.out(JSON.stringify(groups, null, 2));
      const placed = groups.some((pg) => pg.bundles.some((b) => b.nodeId !== undefined));
      const nodeNames = new Map(placed ? (await client.nodes()).map((n) => [n.nodeId, n.name] as const) : []);
      for (const line of placementGroupTable(groups, nodeNames)) io.out(line);
      return;
    }
    const actors = await client.actors(states ? { states } : {});
    if (json) return io.out(JSON.stringify(actors, null, 2));
    const rows = actors.map((a) => [
      a.actorId,
      a.className,
      a.name ? `${a.namespace}/${a.name}` : '-',
      a.state,
      a.nodeId ?? '-',
      String(a.numRestarts),
      a.deathCause ?? a.pendingReason ?? '',
    ]);
    for (const line of table(['ACTOR_ID', 'CLASS', 'NAME', 'STATE', 'NODE_ID', 'RESTARTS', 'DETAIL'], rows)) io.out(line);
  });
  return 0;
}

/** `ALIVE,pending` → the actor states (case-insensitive); an unknown one is a UsageError on --state. */
function statesOf(text: string | undefined): ActorState[] | undefined {
  if (text === undefined) return undefined;
  return [...new Set(text.split(',').map((s) => {
    const state = s.trim().toUpperCase() as ActorState;
    if (!ACTOR_STATES.includes(state)) throw new UsageError(`list: --state: unknown actor state ${JSON.stringify(s.trim())} (expected ${ACTOR_STATES.join(', ')})`, '--state');
    return state;
  }))];
}
