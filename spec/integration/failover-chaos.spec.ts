// The chaos bench in small (bench/chaos.ts, bench/support/chaos-run.ts): four raylet processes,
// about fifty actors with hard affinity, anti-affinity, selectors and tolerations, one SIGKILL of
// the busiest raylet with a replacement started — then every invariant checked from the outside.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkInvariants, type ExpectedActor } from '../../bench/support/chaos-invariants.ts';
import { runChaos } from '../../bench/support/chaos-run.ts';
import { actorAffinity, antiAffinity, Exists } from '../../lib/index.ts';
import type { ActorInfo, NodeInfo } from '../../runtime/index.ts';

test('after a raylet is SIGKILLed: every actor ALIVE, hard constraints hold, no leak, one live incarnation each', async () => {
  const result = await runChaos({ actors: 50, kills: 1, intervalMs: 0, victim: 'busiest', settleTimeoutMs: 30_000 });
  assert.equal(result.violations, [], result.violations.map((v) => `${v.kind} ${v.id}: ${v.detail}`).join('\n'));
  assert.is(result.alive, 50);
  assert.ok(Object.keys(result.mix).length >= 4, `a mix of constraints: ${JSON.stringify(result.mix)}`);
  const [kill] = result.kills;
  assert.ok(kill.actorsOnNode > 0, `the killed raylet ran ${kill.actorsOnNode} actors`);
  assert.ok(kill.detectedMs <= 3500, `detected in ${kill.detectedMs.toFixed(0)} ms (node timeout 3,000 ms)`);
  assert.ok(kill.recoveredMs <= 15_000, `every actor ALIVE again ${kill.recoveredMs.toFixed(0)} ms after the kill`);
});

// the checker itself, on made-up tables: it must catch what it claims to
const nodeOf = (nodeId: string, more: Partial<NodeInfo> = {}): NodeInfo => ({
  nodeId, name: nodeId, state: 'ALIVE', labels: { zone: 'a' }, taints: {}, resources: { total: { CPU: 4 }, available: { CPU: 4 } }, ...more,
});
const actorOf = (actorId: string, nodeId: string, more: Partial<ActorInfo> = {}): ActorInfo => ({
  actorId, namespace: 'default', className: 'C', state: 'ALIVE', nodeId, numRestarts: 0, labels: { 'orrery.io/actor-id': actorId }, ...more,
});
const expect = (actorId: string, options: ExpectedActor['options'] = {}): ExpectedActor => ({ actorId, namespace: 'default', options });

test('the invariant checker reports each kind of violation, and nothing when all hold', () => {
  const ok = checkInvariants({
    nodes: [nodeOf('n1', { resources: { total: { CPU: 4 }, available: { CPU: 3 } } }), nodeOf('n2', { taints: { gpu: 'true' } })],
    actors: [actorOf('a', 'n1'), actorOf('b', 'n1'), actorOf('c', 'n2')],
    expected: [expect('a', { numCpus: 1 }), expect('b', { schedulingStrategy: actorAffinity({ key: 'orrery.io/actor-id', operator: 'IN', values: ['a'], soft: false }) }), expect('c', { tolerations: { gpu: Exists() } })],
  });
  assert.equal(ok, []);

  const bad = checkInvariants({
    nodes: [
      nodeOf('n1', { resources: { total: { CPU: 4 }, available: { CPU: 4 } } }),
      nodeOf('n2', { taints: { gpu: 'true' } }),
      nodeOf('n3', { state: 'DEAD' }),
    ],
    actors: [actorOf('a', 'n1'), actorOf('anti', 'n1'), actorOf('sel', 'n1'), actorOf('taint', 'n2'), actorOf('gone', 'n3'), actorOf('wait', 'n1', { state: 'PENDING', nodeId: undefined })],
    expected: [
      expect('a', { numCpus: 1 }),
      expect('anti', { schedulingStrategy: actorAffinity(antiAffinity('a')) }),
      expect('sel', { labelSelector: { zone: 'b' } }),
      expect('taint'),
      expect('gone'),
      expect('wait'),
    ],
  });
  const kinds = bad.map((v) => `${v.kind}:${v.id}`).sort();
  assert.equal(kinds, ['constraint:anti', 'constraint:sel', 'constraint:taint', 'not_alive:gone', 'not_alive:wait', 'resource_leak:n1']);
  assert.match(bad.find((v) => v.id === 'anti')!.detail, /actor anti-affinity orrery\.io\/actor-id notin \(a\)/);
  assert.match(bad.find((v) => v.id === 'n1')!.detail, /CPU available 4, but total 4 − held 1 = 3/);
});

test.run();
