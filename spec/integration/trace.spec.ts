// Recording a failover on real processes: a nats-server on a free port, a GCS process and two
// raylet processes (startLocalCluster, transport 'nats'); `orrery trace record` runs as a process of
// its own, the raylet hosting an actor with maxRestarts 1 is SIGKILLed, the actor restarts on the
// other node, the recording stops, and `orrery trace replay` shows the actor's way there:
// ALIVE → RESTARTING → PENDING → SCHEDULED → ALIVE, on another node. The other node is full (a
// blocker actor holds its only CPU) until the blocker is killed, so the restart waits in PENDING
// first. Every wait is on an event, a state or a line of output, bounded.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { nodeIdAffinity } from '../../lib/index.ts';
import { readTrace } from '../../runtime/inspect/trace-file.ts';
import { startLocalCluster, type ActorHandle, type ActorInfo, type LocalCluster } from '../../runtime/index.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { RunningCli, lines, orrery } from '../runtime/cli/process.ts';

const WAIT_MS = 20_000;
process.env.ORRERY_HEARTBEAT_MS = '200';
process.env.ORRERY_NODE_TIMEOUT_MS = '1500';

let local: LocalCluster;
const dir = mkdtempSync(join(tmpdir(), 'orrery-trace-it-'));

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', nodes: [{ name: 'n1', resources: { CPU: 1 } }, { name: 'n2', resources: { CPU: 1 } }] });
});
test.after(async () => {
  await local?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const stateOf = (h: ActorHandle<unknown>, pass: (i: ActorInfo) => boolean): Promise<ActorInfo> => firstValueFrom(h.state$.pipe(filter(pass), timeout(WAIT_MS)));

test('a recorded failover replays as ALIVE → RESTARTING → PENDING → SCHEDULED → ALIVE with the node change', async () => {
  const nodes = Object.fromEntries((await local.cluster.nodes()).map((n) => [n.name, n.nodeId]));
  const blocker = await local.cluster.actor(CounterActor).options({ numCpus: 1, schedulingStrategy: nodeIdAffinity(nodes.n2) }).remote();
  assert.is((await blocker.ready({ timeoutMs: WAIT_MS })).nodeId, nodes.n2);
  const subject = await local.cluster.actor(CounterActor).options({ numCpus: 1, maxRestarts: 1 }).remote();
  assert.is((await subject.ready({ timeoutMs: WAIT_MS })).nodeId, nodes.n1, 'n1 is the only node with a free CPU');

  const file = join(dir, 'failover.jsonl');
  const recorder = new RunningCli(['trace', 'record', '--out', file, '--address', local.address]);
  await recorder.line('err', (l) => l.startsWith('recording cluster "default"'));
  assert.ok(!recorder.err.some((l) => /answered yet/.test(l)), 'the GCS and raylets acknowledged the recorder');

  await local.killNode(nodes.n1); // SIGKILL of the raylet process and its worker hosts
  await stateOf(subject, (i) => i.state === 'PENDING' && i.numRestarts === 1); // n2 is full
  await blocker.kill({ noRestart: true });
  const moved = await stateOf(subject, (i) => i.state === 'ALIVE' && i.numRestarts === 1);
  assert.is(moved.nodeId, nodes.n2);

  recorder.signal('SIGINT');
  assert.is(await recorder.exited, 0, recorder.err.join('\n'));
  const summary = recorder.out.find((l) => l.startsWith('recorded '));
  assert.match(summary ?? '', new RegExp(`^recorded \\d+ transitions to ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));

  // the file: the subject's transitions, and the other machines' around them
  const trace = readTrace(file);
  assert.is(trace.header.cluster, 'default');
  assert.is(Number(/recorded (\d+)/.exec(summary!)![1]), trace.records.length);
  const mine = trace.records.filter((r) => r.machine === 'actor' && r.id === subject.actorId);
  assert.equal(mine.map((r) => [r.event.type, r.from, r.to]), [
    ['FAILED', 'onNode.ALIVE', 'RESTARTING'],
    ['UNSCHEDULABLE', 'RESTARTING', 'PENDING'],
    ['PLACED', 'PENDING', 'onNode.SCHEDULED'],
    ['CREATED', 'onNode.SCHEDULED', 'onNode.ALIVE'],
  ]);
  assert.is(mine[2].context.nodeId, nodes.n2);
  assert.is(mine[3].context.numRestarts, 1);
  assert.ok(trace.records.some((r) => r.machine === 'node' && r.id === nodes.n1 && r.from === 'ALIVE' && r.to === 'DEAD'), 'the GCS saw n1 die');
  assert.ok(trace.records.some((r) => r.machine === 'actor' && r.id === blocker.actorId && r.to === 'DEAD'), 'the blocker was killed');
  assert.ok(trace.records.some((r) => r.machine === 'raylet' && r.id === nodes.n2), 'the surviving raylet publishes too');
  for (const source of new Set(trace.records.map((r) => `${r.machine}:${r.id}`))) {
    const seqs = trace.records.filter((r) => `${r.machine}:${r.id}` === source).map((r) => r.seq);
    assert.equal(seqs, [...seqs].sort((a, b) => a - b), `${source}: in publish order`);
  }

  // the terminal replay, narrowed to the subject
  const replay = await orrery(['trace', 'replay', file, '--machine', 'actor', '--id', subject.actorId]);
  assert.is(replay.code, 0, replay.stderr);
  const shown = lines(replay.stdout).slice(1);
  const steps = shown.map((l) => /(\S+) → (\S+)\s+node=(\S+)/.exec(l)!.slice(1));
  assert.equal(steps, [
    ['onNode.ALIVE', 'RESTARTING', '-'],
    ['RESTARTING', 'PENDING', '-'],
    ['PENDING', 'onNode.SCHEDULED', nodes.n2],
    ['onNode.SCHEDULED', 'onNode.ALIVE', nodes.n2],
  ]);
  assert.ok(shown[0].includes('FAILED'));
  assert.ok(shown[0].includes(`cause="node ${nodes.n1} died"`), shown[0]);
  const leaves = [steps[0][0], ...steps.map((s) => s[1])].map((s) => s.split('.').at(-1));
  assert.equal(leaves, ['ALIVE', 'RESTARTING', 'PENDING', 'SCHEDULED', 'ALIVE']);
});

test.run();
