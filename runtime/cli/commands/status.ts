import { parseArgs } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, withCluster } from '../connection.ts';
import type { GcsStatus, PlacementGroupInfo } from '../../client/cluster-info.types.ts';
import type { Cluster } from '../../client/cluster.ts';
import { clusterUse, extraLabels, pairs, placementGroupStatus, resourceUse, stateColour } from '../format.ts';
import type { CliIo } from '../io.ts';
import { autoscalerLines } from '../autoscaler-format.ts';
import type { AutoscalerStatusReply } from '../../../protocols/messages/autoscaling.ts';

const FLAGS = { address: 'string', cluster: 'string' } as const;

/**
 * `orrery status`: what the GCS is doing (serving; or recovering, and for how long at most — said at
 * once, before the tables wait for it); the cluster's resource use (used/total over live nodes);
 * nodes by state with labels, taints and resource use; actors by state, pending ones and why they
 * wait; jobs by state; placement groups per state, and why those not created wait; then the
 * autoscaler's last report (autoscaler-format.ts), or "Autoscaler: not running".
 */
export async function status(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('status', argv, FLAGS);
  const address = addressOf('status', args, io.env)!;
  const cluster = clusterOf('status', args, io.env);
  await withCluster(address, cluster, async (client) => {
    io.out(`cluster ${JSON.stringify(cluster)} at ${address}`);
    // said before the tables: while the GCS recovers they wait for it (up to its grace window)
    const gcs = await gcsStatusOf(client);
    if (gcs !== undefined) io.out(`GCS: ${gcsStatusLine(gcs)}`);
    const [nodes, actors, groups, jobs, autoscaler] = await Promise.all([client.nodes(), client.actors(), placementGroupsOf(client), jobsOf(client), autoscalerOf(client)]);
    const live = nodes.filter((n) => n.state !== 'DEAD');
    // the cluster at a glance, as `ray status` opens: used of total over the live nodes
    io.out(`Usage: ${live.length > 0 ? clusterUse(live) : 'no live nodes'}`);
    io.out(`Nodes: ${nodes.length}${countsOf(nodes.map((n) => n.state), io)}`);
    for (const n of nodes) {
      io.out(`  ${n.name}  ${n.nodeId}  ${stateColour(n.state, io.color)}`);
      io.out(`    resources: ${resourceUse(n)}`);
      io.out(`    labels: ${pairs(extraLabels(n))}`);
      io.out(`    taints: ${pairs(n.taints)}`);
    }
    io.out(`Actors: ${actors.length}${countsOf(actors.map((a) => a.state), io)}`);
    const pending = actors.filter((a) => a.state === 'PENDING');
    if (pending.length > 0) {
      io.out('Pending actors:');
      for (const a of pending) {
        const who = `${a.className} ${a.actorId}${a.name ? ` (${a.namespace}/${a.name})` : ''}`;
        io.out(`  ${who}: ${a.pendingReason ?? 'waiting to be scheduled'}`);
      }
    }
    // drivers: each connect() is a job (docs/jobs.md); `orrery list jobs` has the details
    io.out(jobs === undefined ? 'Jobs: not supported by this GCS' : `Jobs: ${jobs.length}${countsOf(jobs.map((j) => j.state), io)}`);
    if (groups === undefined) io.out('Placement groups: not supported by this GCS');
    else for (const line of placementGroupStatus(groups)) io.out(line);
    if (autoscaler === undefined) io.out('Autoscaler: not supported by this GCS');
    else for (const line of autoscalerLines(autoscaler)) io.out(line);
  }, io.access);
  return 0;
}

/**
 * What the GCS is doing; undefined when that cannot be asked: a GCS from before gcs_status (nothing
 * subscribes its subject: NO_RESPONDERS, or UNKNOWN_TYPE), credentials written before it existed
 * (the server refuses the publish), or no GCS at all — which the reads that follow report as they
 * always have. The line is a courtesy; it never fails the command.
 */
async function gcsStatusOf(client: Cluster): Promise<GcsStatus | undefined> {
  try {
    return await client.gcsStatus();
  } catch {
    return undefined;
  }
}

/** "serving (leader epoch 2)", or how far a recovery is and what the tables below wait for. */
export function gcsStatusLine(s: GcsStatus): string {
  const epoch = s.epoch > 0 ? `leader epoch ${s.epoch}` : 'no leader lease';
  if (s.state !== 'RECOVERING' || s.recovering === undefined) return `${s.state.toLowerCase()} (${epoch})`;
  const r = s.recovering;
  const back = `${r.nodesBack} of ${r.nodesExpected} node(s) back`;
  const step =
    r.phase === 'WAITING'
      ? `waiting at most ${(r.graceLeftMs / 1000).toFixed(1)} s more for the rest, then rebuilding its tables from what came back`
      : 'rebuilding its tables from what came back';
  return `recovering what an earlier GCS left (${epoch}): ${back}; ${step} — the tables below follow once it serves`;
}

/** The cluster's placement groups; undefined from a GCS that does not serve them (UNKNOWN_TYPE). */
async function placementGroupsOf(client: Cluster): Promise<PlacementGroupInfo[] | undefined> {
  try {
    return await client.placementGroups();
  } catch (err) {
    if ((err as { code?: unknown }).code === 'UNKNOWN_TYPE') return undefined;
    throw err;
  }
}

/** The cluster's jobs; undefined from a GCS that does not serve list_jobs (UNKNOWN_TYPE). */
async function jobsOf(client: Cluster): Promise<{ state: string }[] | undefined> {
  try {
    return await client.jobs();
  } catch (err) {
    if ((err as { code?: unknown }).code === 'UNKNOWN_TYPE') return undefined;
    throw err;
  }
}

/** The autoscaler's last report; undefined from a GCS that does not serve autoscaler_status (UNKNOWN_TYPE). */
async function autoscalerOf(client: Cluster): Promise<AutoscalerStatusReply | undefined> {
  try {
    return await client.autoscalerStatus();
  } catch (err) {
    if ((err as { code?: unknown }).code === 'UNKNOWN_TYPE') return undefined;
    throw err;
  }
}

/** ` (3 ALIVE, 1 DEAD)`: how many are in each state, in the order first seen; empty for none. */
function countsOf(states: readonly string[], io: CliIo): string {
  const byState = new Map<string, number>();
  for (const s of states) byState.set(s, (byState.get(s) ?? 0) + 1);
  return byState.size === 0 ? '' : ` (${[...byState].map(([s, k]) => `${k} ${stateColour(s, io.color)}`).join(', ')})`;
}
