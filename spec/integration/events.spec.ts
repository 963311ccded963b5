// Schedule-failed events on real processes: each of seed 000's three cases through scheduleFailed$,
// through `orrery events --json` (history, and --follow as they happen) and in `orrery status`; then a
// storm of 1,000 unplaceable actors against the GCS process: every one PENDING with its reason, about
// one event per actor however often the queue is retried, and the GCS answering every nodes() sent
// from a process of its own throughout. How fast it answers is a performance claim and lives in
// `npm run bench:gcs` (bench/gcs.ts), not here.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom, take, timeout, toArray } from 'rxjs';
import { startLocalCluster, type LocalCluster, type ScheduleFailedEvent } from '../../runtime/index.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { RunningCli, lines, orrery } from '../runtime/cli/process.ts';
import { startLatencyProbe, type Latencies, type ProbeResult } from '../../bench/support/latency-probe.ts';

let local: LocalCluster;

test.before(async () => {
  local = await startLocalCluster({
    transport: 'nats',
    nodes: [
      { name: 'e1', labels: { region: 'us' }, resources: { CPU: 2 } },
      { name: 'e2', labels: { region: 'us' }, resources: { CPU: 2 } },
    ],
  });
});
test.after(async () => {
  await local?.stop();
});

test('the three cases of schedule_failed reach scheduleFailed$, orrery events --json (history and --follow) and orrery status', async () => {
  const env = { ORRERY_ADDRESS: local.address };
  const follower = new RunningCli(['events', '--follow', '--json', '--type', 'schedule_failed'], env);
  await follower.line('err', (l) => l.startsWith('following the events'));

  const received = firstValueFrom(local.cluster.scheduleFailed$.pipe(take(3), toArray(), timeout(20_000)));
  const constraints = await local.cluster.actor(CounterActor).options({ labelSelector: { region: 'mars' }, name: 'on-mars' }).remote();
  const resources = await local.cluster.actor(CounterActor).options({ numCpus: 3 }).remote();
  const both = await local.cluster.actor(CounterActor).options({ numCpus: 3, labelSelector: { region: 'mars' } }).remote();
  const events = await received;
  const reasonOf = new Map(events.map((e) => [e.target.id, e.reason]));
  assert.equal([reasonOf.get(constraints.actorId), reasonOf.get(resources.actorId), reasonOf.get(both.actorId)], ['constraints', 'resources', 'constraints_and_resources']);
  const mars = events.find((e) => e.target.id === constraints.actorId)!;
  assert.equal(mars.target, { kind: 'actor', id: constraints.actorId, name: 'on-mars' });
  assert.is(mars.message, "0/2 nodes are available: 2 node(s) didn't match label selector region in (mars).");
  assert.is(mars.nodes.length, 2);

  // --follow printed each as it happened, one JSON object per line
  for (const e of events) await follower.line('out', (l) => (JSON.parse(l) as ScheduleFailedEvent).target.id === e.target.id);
  const followed = follower.out.map((l) => JSON.parse(l) as ScheduleFailedEvent);
  assert.equal(followed, events, 'the same events, as the client API types them');
  follower.signal('SIGTERM');
  assert.is(await follower.exited, 0);

  // history: the GCS's recent-events ring
  const history = await orrery(['events', '--json', '--type', 'schedule_failed'], env);
  assert.is(history.code, 0, history.stderr);
  assert.equal(lines(history.stdout).map((l) => JSON.parse(l) as ScheduleFailedEvent), events);
  const text = await orrery(['events', '--type', 'schedule_failed,actor_state', '--limit', '50'], env);
  assert.is(text.code, 0, text.stderr);
  assert.match(text.stdout, new RegExp(`schedule_failed\\s+actor ${constraints.actorId} \\(on-mars\\)  constraints: 0/2 nodes are available: 2 node\\(s\\) didn't match label selector region in \\(mars\\)\\.`));
  assert.match(text.stdout, new RegExp(`actor_state\\s+actor ${resources.actorId}  Counter PENDING \\(restarts 0\\)`));

  const status = await orrery(['status'], env);
  assert.is(status.code, 0, status.stderr);
  for (const e of events) assert.ok(status.stdout.includes(`${e.target.id}${e.target.name ? ` (default/${e.target.name})` : ''}: ${e.message}`), `status shows ${e.target.id}'s last message`);
  assert.is((await constraints.info()).pendingReason, mars.message);
  for (const h of [constraints, resources, both]) await h.kill();
});

test('storm: 1,000 unplaceable actors produce about 1,000 events, and the GCS keeps answering nodes() while their queue is retried', async () => {
  const N = 1000;
  let stormEvents = 0;
  const counting = local.cluster.scheduleFailed$.pipe(filter((e) => e.target.name?.startsWith('storm-') ?? false)).subscribe(() => stormEvents++);
  // nodes() sent from a process of its own, every 5 ms, while the queue is retried
  const probe = await startLatencyProbe({ address: local.address });
  let probed: ProbeResult | undefined;
  try {
    const storm = [];
    for (let i = 0; i < N; i += 25) {
      const batch = Array.from({ length: Math.min(25, N - i) }, (_, k) => local.cluster.actor(CounterActor).options({ name: `storm-${i + k}`, labelSelector: { region: 'mars' } }).remote());
      storm.push(...(await Promise.all(batch)));
    }
    // churn: every placement and release retries the whole queue, and so does every label change
    for (let i = 0; i < 15; i++) {
      const busy = await local.cluster.actor(CounterActor).options({ numCpus: 1 }).remote();
      await busy.ready({ timeoutMs: 20_000 });
      await busy.kill();
      await local.cluster.setNodeLabels((await local.cluster.nodes())[0].nodeId, { set: { churn: String(i) } });
    }
    probed = await probe.stop(); // rejects, naming the exit code, if the probe process died
    const deadline = Date.now() + 10_000;
    while (stormEvents < N && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const pending = (await local.cluster.actors()).filter((a) => a.name?.startsWith('storm-'));
    assert.is(pending.length, N);
    assert.ok(pending.every((a) => a.state === 'PENDING' && a.pendingReason?.includes('region in (mars)')));
    assert.ok(stormEvents >= N && stormEvents <= N * 1.05, `${stormEvents} schedule_failed events for ${N} actors (not one per retry)`);
    const { gcs, control, failures } = probed;
    const ms = (l: Latencies) => `${l.count} answers, worst ${l.worst.toFixed(1)}, p99 ${l.p99.toFixed(1)}, median ${l.median.toFixed(1)} ms`;
    if (process.env.ORRERY_SPEC_VERBOSE) console.log(`nodes() during the storm: ${ms(gcs)}; a trivial responder meanwhile: ${ms(control)}`);
    // answers throughout: the probe asked all along and every request, GCS or control, was answered
    assert.ok(gcs.count > 50, `${gcs.count} nodes() answered during the storm`);
    assert.equal(failures, [], `${failures.length} probe requests got no answer: ${failures.slice(0, 3).map((f) => `${f.to} after ${f.ms.toFixed(0)} ms: ${f.error}`).join('; ')}`);
    assert.is(control.count, gcs.count, 'the control was asked once after every nodes()');
    await Promise.all(storm.map((h) => h.kill()));
  } finally {
    if (!probed) probe.kill();
    counting.unsubscribe();
  }
});

test.run();
