// The GCS side of the autoscaler on real processes (issue 16, parts 2 and 6): a secured cluster
// (nats-server with orrery auth init, a GCS and a raylet process). The admin role — the
// autoscaler's — reads resource_demands and reports its status and events; the events reach
// events$, recentEvents and `orrery events`; `orrery status` shows the report as `ray status` does,
// or "Autoscaler: not running"; an observer reads the status but not the demands.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom, take, timeout, toArray } from 'rxjs';
import { credsFile } from '../../runtime/auth/init.ts';
import type { Role } from '../../runtime/auth/roles.ts';
import { runCli } from '../../runtime/cli/run.ts';
import { ClusterClient } from '../../runtime/client/cluster.ts';
import type { AutoscalerClusterEvent } from '../../runtime/client/cluster-info.types.ts';
import { connect, startLocalCluster, type Cluster, type LocalCluster } from '../../runtime/index.ts';
import { AUTOSCALER_EVENT_TYPES, type AutoscalerStatus } from '../../protocols/messages/autoscaling.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { until } from '../helpers/until.ts';

let local: LocalCluster;
const others: Cluster[] = [];

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', auth: true, nodes: [{ name: 'c1', labels: { type: 'cpu' }, resources: { CPU: 2 } }] });
});
test.after(async () => {
  for (const c of others) await c.close();
  await local?.stop();
});

const creds = (role: Role): string => credsFile(local.authDir!, role);
const gcsOf = (c: Cluster) => (c as ClusterClient).gcs;

/** `orrery <args>` in this process, as `role`: its exit code and stdout lines. */
async function orrery(args: string[], role: Role = 'observer'): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli([...args, '--address', local.address, '--creds', creds(role)], { out: (l) => out.push(l), err: (l) => err.push(l), env: {} });
  return { code, out, err };
}

const now = Date.now();
const status: AutoscalerStatus = {
  time: now,
  nodeTypes: [
    { name: 'cpu', live: 1, launching: 0, minWorkers: 1, maxWorkers: 4 },
    { name: 'gpu', live: 0, launching: 1, minWorkers: 0, maxWorkers: 2 },
  ],
  launching: [{ type: 'gpu', name: 'gpu-1a2b', since: now - 1_000 }],
  demands: [{ description: '{CPU: 1} labelSelector {type: gpu} tolerates gpu_node', count: 1, launch: [{ type: 'gpu', count: 1 }] }],
  infeasible: [{ description: '{CPU: 64}', count: 1, reason: 'no node type has 64 CPU' }],
  failures: [],
};

test('before any report, orrery status says the autoscaler is not running', async () => {
  const r = await orrery(['status']);
  assert.is(r.code, 0, r.err.join('\n'));
  assert.ok(r.out.includes('Autoscaler: not running'), r.out.join('\n'));
  assert.equal(await local.cluster.autoscalerStatus(), { status: null });
});

test('the admin reads resource_demands: the pending actor grouped with its options, infeasible on these nodes; the node with its units', async () => {
  const handle = await local.cluster.actor(CounterActor).options({ labelSelector: { type: 'gpu' }, tolerations: { gpu_node: { operator: 'EXISTS', values: [] } } } as never).remote();
  const reply = await until('the pending actor in resource_demands', async () => {
    const r = await gcsOf(local.cluster).resourceDemands();
    return r.actors.some((g) => g.actorIds.includes(handle.actorId)) ? r : undefined;
  });
  const [group] = reply.actors;
  assert.equal(group.placement, { labelSelector: { type: 'gpu' }, tolerations: { gpu_node: { operator: 'EXISTS', values: [] } } });
  assert.equal([group.count, group.infeasible, group.defaultCpus], [1, 1, 1]);
  assert.match(group.reason!, /didn't match label selector type in \(gpu\)/);
  assert.is(reply.nodes.length, 1);
  assert.is(reply.nodes[0].labels.type, 'cpu');
  assert.is(reply.nodes[0].total.CPU, 20_000, 'units');
  await handle.kill();
});

test('a report: its events reach events$ and recentEvents typed; orrery events and orrery status print them', async () => {
  const events = AUTOSCALER_EVENT_TYPES.map((type, i) => ({ type, time: now + i, nodeType: 'gpu', message: `${type}: gpu-1a2b`, ...(i > 0 ? { nodeName: 'gpu-1a2b' } : {}) }));
  const seen = firstValueFrom(local.cluster.events$.pipe(filter((e): e is AutoscalerClusterEvent => (AUTOSCALER_EVENT_TYPES as readonly string[]).includes(e.type)), take(events.length), toArray(), timeout(20_000)));
  await gcsOf(local.cluster).autoscalerReport(status, events);
  const live = await seen;
  assert.equal(live.map((e) => ({ ...e, seq: undefined })), events.map((e) => ({ ...e, seq: undefined })));
  const recent = await local.cluster.recentEvents({ types: [...AUTOSCALER_EVENT_TYPES] });
  assert.equal(recent.events.map((e) => e.type), [...AUTOSCALER_EVENT_TYPES]);

  const listed = await orrery(['events', '--type', 'node_launch_requested']);
  assert.is(listed.code, 0, listed.err.join('\n'));
  assert.ok(listed.out.some((l) => /node_launch_requested\s+gpu:\s+node_launch_requested: gpu-1a2b$/.test(l)), listed.out.join('\n'));

  const r = await orrery(['status']);
  assert.is(r.code, 0, r.err.join('\n'));
  const text = r.out.join('\n');
  assert.match(text, /^Autoscaler \(reported \d+s ago\)$/m);
  assert.match(text, /^ {4}gpu {2}live 0 {2}launching 1 {2}min 0 {2}max 2$/m);
  assert.match(text, /^ {4}gpu-1a2b \(gpu\), requested \d+s ago$/m);
  assert.match(text, /^ {4}1 × \{CPU: 1\} labelSelector \{type: gpu\} tolerates gpu_node: launching 1 gpu$/m);
  assert.match(text, /^ {2}Infeasible demands:\n {4}1 × \{CPU: 64\}: no node type has 64 CPU$/m);
  assert.match(text, /^Nodes: 1 \(1 ALIVE\)$/m, "today's output stays");
});

test('an observer reads the autoscaler status but may not read the demands or report', async () => {
  const observer = await connect({ address: local.address, creds: creds('observer') });
  others.push(observer);
  assert.equal((await observer.autoscalerStatus()).status, status);
  const denied = async (run: () => Promise<unknown>) => {
    try {
      await run();
      return 'ok';
    } catch (err) {
      return (err as { code?: string }).code;
    }
  };
  assert.is(await denied(() => gcsOf(observer).resourceDemands()), 'PERMISSION_DENIED');
  assert.is(await denied(() => gcsOf(observer).autoscalerReport(status, [])), 'PERMISSION_DENIED');
});

test.run();
