import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { seededRng } from '../../lib/random.ts';
import { encode } from '../../protocols/codec.ts';
import { subjects } from '../../protocols/subjects.ts';
import { decodeReply } from '../../protocols/reply.ts';
import { unknown } from '../../protocols/validate.ts';
import { connectMemoryBus, MemoryBroker } from '../../runtime/bus/memory.ts';
import { GcsService } from '../../runtime/gcs/service.ts';
import { parseSimArgs } from '../../bench/sim.ts';
import { SimClock } from '../../bench/sim/clock.ts';
import { Farm, realNow } from '../../bench/sim/farm.ts';
import { runSim } from '../../bench/sim/run.ts';
import { nodeSpec, placementProblem, type ActorPlan } from '../../bench/sim/workload.ts';

// The simulator (bench/sim/) is a measuring instrument: these specs check that it is reproducible
// and that its invariant checks catch what they claim to, on small sizes.

const small = { nodes: 20, actors: 300, churnSeconds: 3, pendingActors: 50 };

test('the same seed gives the same trace, and a run of the real GCS breaks no invariant', async () => {
  const a = await runSim({ ...small, seed: 7 });
  const b = await runSim({ ...small, seed: 7 });
  assert.equal(a.violations, []);
  assert.equal(b.violations, []);
  assert.ok(a.events > small.actors, `${a.events} events`);
  assert.is(a.traceHash, b.traceHash);
  assert.is(a.events, b.events);
  assert.is(a.leftPending, 0, 'every actor that can run runs');
});

test('another seed gives another trace', async () => {
  const a = await runSim({ ...small, seed: 7 });
  const c = await runSim({ ...small, seed: 8 });
  assert.is.not(a.traceHash, c.traceHash);
});

test('the clock is restored after a run', async () => {
  const before = { setTimeout: globalThis.setTimeout, now: Date.now, perf: performance.now };
  await runSim({ nodes: 3, actors: 10, churnSeconds: 0, pendingActors: 0, seed: 1 });
  assert.is(globalThis.setTimeout, before.setTimeout);
  assert.is(Date.now, before.now);
  assert.is(performance.now, before.perf);
  assert.ok(Math.abs(Date.now() - new Date().getTime()) < 1000, 'Date.now is the real clock again');
});

test('SimClock: timers fire at their simulated instants, in order, ties by the order they were set', async () => {
  const clock = new SimClock({ epochMs: 1_000_000 });
  clock.install();
  try {
    const fired: string[] = [];
    setTimeout(() => fired.push(`b@${clock.now}`), 20);
    setTimeout(() => fired.push(`a@${clock.now}`), 10);
    setTimeout(() => fired.push(`c@${clock.now}`), 20);
    const cancelled = setTimeout(() => fired.push('never'), 15);
    clearTimeout(cancelled);
    const every = setInterval(() => fired.push(`i@${clock.now}`), 25);
    assert.is(Date.now(), 1_000_000);
    await clock.advance(60, async () => {});
    clearInterval(every);
    assert.equal(fired, ['a@10', 'b@20', 'c@20', 'i@25', 'i@50']);
    assert.is(clock.now, 60);
    assert.is(Date.now(), 1_000_060);
    assert.is(performance.now(), 60);
  } finally {
    clock.uninstall();
  }
});

const node = (overrides: Partial<ReturnType<typeof nodeSpec>> = {}) => ({ ...nodeSpec(0, seededRng(1)), ...overrides });
const plan = (actorId: string, kind: ActorPlan['kind'], more: Partial<ActorPlan> = {}): ActorPlan => ({ actorId, kind, options: {}, ...more });

test('the placement checks name each broken rule, from the workload’s own definitions', () => {
  const cpuZ1 = node({ nodeId: 'n1', labels: { zone: 'z1', rack: 'r0', type: 'cpu' }, taints: {} });
  const cpuZ3 = node({ nodeId: 'n3', labels: { zone: 'z3', rack: 'r0', type: 'cpu' }, taints: {} });
  const gpu = node({ nodeId: 'g1', labels: { zone: 'z1', rack: 'r0', type: 'gpu' }, taints: { gpu: 'true:NoSchedule' } });
  const cases: [string, ActorPlan, ReturnType<typeof node>, ActorPlan[], boolean][] = [
    ['zones on z1', plan('a', 'zones'), cpuZ1, [], true],
    ['zones on z3', plan('a', 'zones'), cpuZ3, [], false],
    ['fallback on its fallback zone z3', plan('a', 'fallback'), cpuZ3, [], true],
    ['fallback on z1', plan('a', 'fallback'), cpuZ1, [], false],
    ['plain on a tainted GPU node', plan('a', 'plain'), gpu, [], false],
    ['gpu-tolerant on the GPU node', plan('a', 'gpu-tolerant'), gpu, [], true],
    ['gpu-tolerant on a CPU node', plan('a', 'gpu-tolerant'), cpuZ1, [], false],
    ['node-id on its node', plan('a', 'node-id', { nodeId: 'n1' }), cpuZ1, [], true],
    ['node-id elsewhere', plan('a', 'node-id', { nodeId: 'n1' }), cpuZ3, [], false],
    ['infeasible placed anywhere', plan('a', 'infeasible'), cpuZ1, [], false],
  ];
  for (const [name, p, n, others, ok] of cases) assert.is(placementProblem(p, n, others) === undefined, ok, name);
  const x = plan('x', 'anti', { group: 'svc1' });
  const y = plan('y', 'anti', { group: 'svc1' });
  const z = plan('z', 'anti', { group: 'svc2' });
  assert.match(placementProblem(x, cpuZ1, [x, y]) ?? '', /x and y \(anti-affinity svc1\) share node n1/);
  assert.is(placementProblem(x, cpuZ1, [x, z]), undefined, 'another group may share the node');
});

test('a simulated raylet reports an over-commit when the GCS asks it to run more than it has', async () => {
  const broker = new MemoryBroker();
  const s = subjects('spec');
  const gcs = new GcsService({ bus: connectMemoryBus(broker), cluster: 'spec' });
  await gcs.start();
  const farmBus = connectMemoryBus(broker);
  const farm = new Farm({ bus: farmBus, subjects: s, rng: seededRng(1), now: () => 0, realNow });
  const spec = node({ nodeId: 'n1', taints: {} });
  try {
    await farm.join(spec);
    const create = (actorId: string, resources: Record<string, number>) =>
      connectMemoryBus(broker).request(s.raylet('n1', 'create_actor'), encode('create_actor', {
        actorId, code: { moduleUrl: 'file:///sim.js', className: 'A', args: [] }, namespace: 'sim', labels: {}, resources,
        maxConcurrency: 1, isolation: 'shared', incarnation: 0,
      }), { timeoutMs: 5000 });
    decodeReply((await create('fits', { CPU: spec.total.CPU })).data, { value: unknown() });
    assert.equal(farm.violations, []);
    const over = await create('over', { CPU: 1 });
    assert.throws(() => decodeReply(over.data, { value: unknown() }), /not enough resources on n1/);
    assert.is(farm.violations.length, 1);
    assert.match(farm.violations[0], /^over-commit: over on n1/);
  } finally {
    await gcs.stop();
  }
});

test('npm run sim: flags are checked and named', () => {
  assert.equal(parseSimArgs(['--nodes', '100', '--actors', '500', '--seed', '3', '--json']), { child: false, sizes: [100], actors: 500, seed: 3, churnSeconds: 10, json: true });
  assert.equal(parseSimArgs([]).sizes, [50, 500, 5000]);
  assert.throws(() => parseSimArgs(['--nodes', 'many']), /--nodes needs a whole number/);
  assert.throws(() => parseSimArgs(['--actors']), /--actors needs a whole number .* \(got nothing\)/);
  assert.throws(() => parseSimArgs(['--fast']), /unknown argument --fast/);
});

test.run();
