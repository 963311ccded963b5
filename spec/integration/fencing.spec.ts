// Fencing on real processes (issue 13): a raylet frozen with SIGSTOP. The GCS declares its node dead
// and restarts its actors elsewhere; the frozen raylet's worker hosts (processes of their own, still
// running, still connected to NATS) must have stopped answering before that — and after SIGCONT the
// stale hosts answer nothing. Checked from the answers themselves: every call is recorded with the
// process and incarnation that answered it and when, and for every actor the answer spans of two
// incarnations never overlap. Every wait is on a condition, bounded by a generous timeout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { nodeIdAffinity } from '../../lib/index.ts';
import { ActorUnavailableError, startLocalCluster, type ActorHandle, type ClusterEvent, type LocalCluster, type NodeEvent } from '../../runtime/index.ts';
import { isRunning } from '../../runtime/local/process-tree.ts';
import { TallyActor, type Tally, type TallyAnswer } from '../runtime/client/failover-actors.ts';

const HEARTBEAT_MS = 200;
const NODE_TIMEOUT_MS = 1500;
const WAIT_MS = 30_000;
// the GCS process reads these (runtime/gcs/flags.ts); the raylets learn both from its registration reply
process.env.ORRERY_HEARTBEAT_MS = String(HEARTBEAT_MS);
process.env.ORRERY_NODE_TIMEOUT_MS = String(NODE_TIMEOUT_MS);

interface Answer extends TallyAnswer {
  sentAt: number;
  answeredAt: number;
}

let local: LocalCluster;

test.before(async () => {
  local = await startLocalCluster({ transport: 'nats', nodes: [{ name: 'n1', resources: { CPU: 8 } }, { name: 'n2', resources: { CPU: 8 } }] });
});
test.after(async () => {
  await local?.stop();
});

/** Resolves once `pass` holds, checked after each answer; rejects after WAIT_MS. */
function until(what: string, pass: () => boolean, wake: Set<() => void>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const check = (): void => {
      if (!pass()) return;
      wake.delete(check);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      wake.delete(check);
      reject(new Error(`timed out waiting for ${what}`));
    }, WAIT_MS);
    wake.add(check);
    check();
  });
}

/** Resolves once `pass` holds, looked at every 50 ms; rejects after WAIT_MS. */
async function polled(what: string, pass: () => boolean): Promise<void> {
  const giveUp = performance.now() + WAIT_MS;
  while (!pass()) {
    if (performance.now() > giveUp) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const event = <E extends ClusterEvent>(pass: (e: ClusterEvent) => e is E): Promise<E> => firstValueFrom(local.cluster.events$.pipe(filter(pass), timeout(WAIT_MS)));

test('a frozen raylet: its hosts stop answering before the GCS restarts its actors elsewhere, and answer nothing after SIGCONT', async () => {
  const victim = await local.addNode({ name: 'victim', resources: { CPU: 8 } });
  const rayletPid = local.rayletPid?.(victim.nodeId);
  assert.ok(rayletPid !== undefined, 'the process cluster knows the raylet pid');

  const names = Array.from({ length: 6 }, (_, i) => `fenced-${i}`);
  const handles: ActorHandle<Tally>[] = [];
  for (const [i, name] of names.entries()) {
    handles.push(
      await local.cluster
        .actor(TallyActor)
        .options({ name, isolation: i % 2 === 0 ? 'process' : 'shared', maxRestarts: -1, maxTaskRetries: -1, schedulingStrategy: nodeIdAffinity(victim.nodeId, { soft: true }) })
        .remote(),
    );
  }
  for (const h of handles) assert.is((await h.ready({ timeoutMs: WAIT_MS })).nodeId, victim.nodeId);

  // One sequential caller per actor: were two incarnations subscribed at once, NATS would hand
  // each call to both and the first answer would win, so their answers would interleave.
  const answers = new Map<string, Answer[]>(names.map((n) => [n, []]));
  const wake = new Set<() => void>();
  const errors: unknown[] = [];
  let running = true;
  const loops = handles.map(async (h, i) => {
    while (running) {
      const sentAt = performance.now();
      try {
        const a = await h.call('bump');
        answers.get(names[i])!.push({ ...a, sentAt, answeredAt: performance.now() });
      } catch (err) {
        errors.push(err); // with maxTaskRetries -1 a call waits out the restart: none expected
      }
      for (const w of [...wake]) w();
    }
  });
  const answeredBy = (name: string, pass: (a: Answer) => boolean): number => answers.get(name)!.filter(pass).length;
  await until('5 answers from every actor', () => names.every((n) => answeredBy(n, () => true) >= 5), wake);
  const stale = new Map(names.map((n) => [n, answers.get(n)!.at(-1)!]));
  for (const a of stale.values()) assert.is(a.context.nodeId, victim.nodeId);

  const dead = event((e): e is NodeEvent => e.type === 'node_dead' && e.node.nodeId === victim.nodeId);
  process.kill(rayletPid!, 'SIGSTOP');
  let resumed = false;
  let back: Promise<NodeEvent> | undefined;
  try {
    // While frozen, a call without retries to an actor of the node fails typed, never hangs: its
    // hosts fenced themselves (NO_RESPONDERS); it is sent again while the GCS says ALIVE, and fails
    // once the GCS declares the node dead and the actor RESTARTING (call-resend.spec.ts).
    const once = await local.cluster.getActor<Tally>(names[0]);
    let failure: unknown;
    while (failure === undefined) failure = await once.call('peek').then(() => undefined, (err: unknown) => err);
    assert.instance(failure, ActorUnavailableError);

    await dead;
    await until(
      'every actor answering from a new incarnation on another node, 5 times',
      () => names.every((n) => answeredBy(n, (a) => a.context.nodeId !== victim.nodeId) >= 5),
      wake,
    );
    // the frozen raylet's hosts are still running (frozen raylet, not dead hosts): they fenced themselves
    const stalePids = [...new Set([...stale.values()].map((a) => a.pid))];
    for (const pid of stalePids) assert.ok(isRunning(pid), `stale worker host ${pid} is still running while its raylet is frozen`);
  } finally {
    back = event((e): e is NodeEvent => e.type === 'node_added' && e.node.nodeId === victim.nodeId);
    process.kill(rayletPid!, 'SIGCONT');
    resumed = true;
  }
  const resumedAt = performance.now();
  await back;
  const counts = new Map(names.map((n) => [n, answeredBy(n, () => true)]));
  await until('20 more answers from every actor after the raylet registered again', () => names.every((n) => answeredBy(n, () => true) >= counts.get(n)! + 20), wake);
  running = false;
  await Promise.all(loops);
  assert.ok(resumed);
  assert.equal(errors, [], 'no call failed');

  for (const name of names) {
    const list = answers.get(name)!;
    const old = stale.get(name)!;
    // spans per incarnation: from the send of its first answered call to its last answer
    const spans = new Map<string, { pid: number; from: number; to: number; n: number }>();
    for (const a of list) {
      const s = spans.get(a.incarnation);
      if (s) {
        s.to = a.answeredAt;
        s.n++;
      } else spans.set(a.incarnation, { pid: a.pid, from: a.sentAt, to: a.answeredAt, n: 1 });
    }
    const ordered = [...spans.entries()].sort((x, y) => x[1].from - y[1].from);
    for (let i = 1; i < ordered.length; i++) {
      const [prevId, prev] = ordered[i - 1];
      const [nextId, next] = ordered[i];
      assert.ok(prev.to <= next.from, `${name}: incarnation ${prevId} (pid ${prev.pid}) answered until ${prev.to.toFixed(0)} ms, after ${nextId} (pid ${next.pid}) began answering at ${next.from.toFixed(0)} ms`);
    }
    assert.ok(ordered.length >= 2, `${name} restarted`);
    assert.not.ok(list.some((a) => a.incarnation === old.incarnation && a.answeredAt > resumedAt), `${name}: the stale incarnation answered after SIGCONT`);
    // counts of each incarnation go up by one per answer: no other caller, no answer lost between two
    for (const [id] of ordered) {
      const counted = list.filter((a) => a.incarnation === id).map((a) => a.count);
      assert.equal(counted, counted.map((_, i) => counted[0] + i), `${name}: incarnation ${id} counted every answer once`);
    }
  }
  // The returning raylet heard known:false and dropped its actors: a dedicated stale host ends.
  const dedicated = [...stale.entries()].filter(([n]) => names.indexOf(n) % 2 === 0).map(([, a]) => a.pid);
  await polled('the stale dedicated worker hosts to exit', () => dedicated.every((pid) => !isRunning(pid)));
});

test.run();
