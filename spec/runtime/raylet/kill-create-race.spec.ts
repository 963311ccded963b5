// A kill of one incarnation racing the create of the next on one raylet (LocalActors over the
// HostManager). The GCS sends kill_actor for incarnation n and then create_actor for n + 1 (a kill
// with restart). With worker hosts in processes of their own, both can reach the raylet while the
// create of n is still with its host (its constructor running) or still waiting for a host to be
// forked, so the host's answers come back in either order. Each spec fixes one order with gates and
// checks that only the newest incarnation runs, and that a later kill and a host exit reach it.
// (Before the host manager kept creates apart, a kill while a host was forking did not reach the
// create, the late create then ended the newer incarnation's host — a restart dying of
// WORKER_EXITED — and a stale create's failure made the raylet lose track of the newer one.)
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CreateActor } from '../../../protocols/messages/actor.ts';
import { ActorDiedError } from '../../../runtime/errors.ts';
import { LocalActors, type LostActor } from '../../../runtime/raylet/local-actors.ts';
import type { WorkerHost } from '../../../runtime/raylet/worker-host.ts';
import type { RunTask } from '../../../runtime/worker/task-runner.ts';
import { createSpec, rejection } from '../worker/support.ts';

/**
 * A worker host that behaves as ActorHost does (runtime/worker/host.ts) — a create finishes when its
 * constructor returns, a kill while it runs fails that create with ACTOR_DIED, a create of another
 * incarnation replaces the one held — except that each constructor returns only when the spec says.
 */
class GatedHost implements WorkerHost {
  static nextPid = 5000;
  readonly pid = GatedHost.nextPid++;
  readonly exited: Promise<string>;
  /** actorId → the incarnation the host runs. */
  readonly running = new Map<string, number>();
  private readonly starting = new Map<string, { incarnation: number; killed: boolean }>();
  /** Every create made, with what lets its constructor return. */
  private readonly constructing: { actorId: string; incarnation: number; finish: () => void }[] = [];
  stopped = false;
  private end!: (how: string) => void;

  constructor() {
    this.exited = new Promise((resolve) => (this.end = resolve));
  }

  /** Whether a create of `incarnation` is waiting for its constructor. */
  isStarting(actorId: string, incarnation: number): boolean {
    return this.starting.get(actorId)?.incarnation === incarnation;
  }

  /** The constructor of the create of `incarnation` returns (its create may still fail: killed). */
  finish(actorId: string, incarnation: number): void {
    const entry = this.constructing.find((e) => e.actorId === actorId && e.incarnation === incarnation);
    if (!entry) throw new Error(`no create of ${actorId}#${incarnation} was made`);
    entry.finish();
  }

  async create(spec: CreateActor): Promise<void> {
    if (this.stopped) throw new ActorDiedError(spec.actorId, 'the worker host is stopping');
    void this.kill(spec.actorId);
    const entry = { incarnation: spec.incarnation, killed: false };
    const constructed = new Promise<void>((finish) => this.constructing.push({ actorId: spec.actorId, incarnation: spec.incarnation, finish }));
    this.starting.set(spec.actorId, entry);
    await constructed;
    if (this.starting.get(spec.actorId) === entry) this.starting.delete(spec.actorId);
    if (entry.killed) throw new ActorDiedError(spec.actorId, 'killed while starting');
    this.running.set(spec.actorId, spec.incarnation);
  }

  async kill(actorId: string): Promise<boolean> {
    const starting = this.starting.get(actorId);
    if (starting) {
      starting.killed = true;
      this.starting.delete(actorId);
    }
    return this.running.delete(actorId) || starting !== undefined;
  }

  runTask(_task: RunTask): Promise<void> {
    return Promise.reject(new Error('no tasks here'));
  }

  revokeLeases(): void {}
  cancelTasks(): void {}
  lease(): void {}

  /** As ActorHost.stop: every actor killed, constructing ones included. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const id of [...this.starting.keys(), ...this.running.keys()]) void this.kill(id);
    this.end('code 0');
  }

  crash(): void {
    this.end('signal SIGKILL');
  }
}

function raylet() {
  const hosts: { host: GatedHost; dedicated: boolean }[] = [];
  const lost: { actors: LostActor[]; cause: string }[] = [];
  /** While set, each launch waits until the spec lets it finish (a fork takes a while). */
  let holding = false;
  const held: (() => void)[] = [];
  const actors = new LocalActors({
    nodeId: 'node000000000001',
    total: { CPU: 40_000 },
    launch: async ({ dedicated }) => {
      if (holding) await new Promise<void>((resolve) => held.push(resolve));
      const host = new GatedHost();
      hosts.push({ host, dedicated });
      return host;
    },
    onLost: (list, cause) => lost.push({ actors: list, cause }),
    log: () => {},
  });
  /** Holds every launch from now on; returns what finishes the i-th launch held. */
  const holdLaunches = (): ((i: number) => void) => {
    holding = true;
    return (i) => held[i]();
  };
  return { actors, hosts, lost, holdLaunches };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

for (const isolation of ['shared', 'process'] as const) {
  for (const then of ['kill', 'host exit'] as const) {
    test(`${isolation} host: the create of incarnation 0 failing (killed while starting) after the create of 1 went out leaves 1 known to the raylet (then: ${then})`, async () => {
      const { actors, hosts, lost } = raylet();
      // a host already running, as after earlier actors
      const other = createSpec('Counter', { isolation });
      const warm = actors.create(other);
      await turn();
      hosts[0].host.finish(other.actorId, 0);
      await warm;

      const v0 = createSpec('Counter', { isolation });
      const v1 = { ...v0, incarnation: 1 };
      const created0 = rejection(actors.create(v0));
      await turn();
      const host0 = hosts.at(-1)!.host;
      assert.ok(host0.isStarting(v0.actorId, 0), 'incarnation 0 is constructing');
      // kill_actor for 0 (the GCS restarts the actor), then create_actor for 1
      assert.equal(await actors.kill(v0.actorId, 0), { killed: true });
      const created1 = actors.create(v1);
      await turn();
      const host1 = hosts.at(-1)!.host;
      assert.ok(host1.isStarting(v1.actorId, 1), 'incarnation 1 is constructing');
      // the host's answer for 0 (killed while starting) arrives now, before 1's
      host0.finish(v0.actorId, 0);
      const err = await created0;
      assert.is(err.code, 'ACTOR_DIED');
      host1.finish(v1.actorId, 1);
      assert.equal(await created1, { actorId: v1.actorId, incarnation: 1, pid: host1.pid });
      assert.is(host1.running.get(v1.actorId), 1);
      assert.is(actors.hosts.pidOf(v1.actorId), host1.pid, 'the raylet knows where incarnation 1 runs');

      if (then === 'kill') {
        // kill_actor for 1 reaches the host that runs it
        assert.equal(await actors.kill(v1.actorId, 1), { killed: true });
        assert.is(host1.running.has(v1.actorId), false, 'incarnation 1 no longer runs');
        if (isolation === 'process') assert.ok(host1.stopped, 'its dedicated host ended');
      } else {
        // its host dies: incarnation 1 is reported lost (gcs.actor_died)
        host1.crash();
        await turn();
        const expected = isolation === 'shared' ? [{ actorId: other.actorId, incarnation: 0 }, { actorId: v1.actorId, incarnation: 1 }] : [{ actorId: v1.actorId, incarnation: 1 }];
        assert.equal(lost.map((l) => l.actors), [expected]);
      }
    });
  }

  test(`${isolation} host: a kill while the create waits for its host starts nothing`, async () => {
    const { actors, hosts, holdLaunches } = raylet();
    const open = holdLaunches();
    const v0 = createSpec('Counter', { isolation });
    const created0 = rejection(actors.create(v0));
    await turn();
    assert.is(hosts.length, 0, 'the host is still starting');
    assert.equal(await actors.kill(v0.actorId, 0), { killed: true });
    open(0);
    await turn();
    const host = hosts[0].host;
    const started = host.isStarting(v0.actorId, 0);
    if (started) host.finish(v0.actorId, 0);
    const err = await created0;
    assert.is(err.code, 'ACTOR_DIED');
    assert.is(started || host.running.has(v0.actorId), false, 'the killed incarnation was not started in the host');
    assert.is(actors.hosts.pidOf(v0.actorId), undefined);
    if (isolation === 'process') assert.ok(host.stopped, 'the dedicated host started for it ended');
    assert.is(actors.count, 0);
  });
}

test("process host: the host for incarnation 0 starting after the one for 1 neither runs 0 nor ends 1", async () => {
  const { actors, hosts, holdLaunches } = raylet();
  const finishLaunch = holdLaunches();
  const v0 = createSpec('Counter', { isolation: 'process' });
  const v1 = { ...v0, incarnation: 1 };
  const created0 = rejection(actors.create(v0));
  await turn();
  // kill_actor for 0, create_actor for 1, each host still forking
  assert.equal(await actors.kill(v0.actorId, 0), { killed: true });
  const created1 = actors.create(v1);
  await turn();
  finishLaunch(1);
  await turn();
  const host1 = hosts[0].host;
  assert.ok(host1.isStarting(v1.actorId, 1), 'incarnation 1 is constructing in the host started second');
  finishLaunch(0);
  await turn();
  const host0 = hosts[1].host;
  const started0 = host0.isStarting(v0.actorId, 0);
  if (started0) host0.finish(v0.actorId, 0);
  const host1Ended = host1.stopped;
  host1.finish(v1.actorId, 1);
  const err = await created0;
  assert.is(err.code, 'ACTOR_DIED');
  assert.is(host1Ended, false, 'the host of incarnation 1 still runs');
  assert.is(started0, false, 'incarnation 0 was not started');
  assert.ok(host0.stopped, 'the host started for incarnation 0 ended');
  assert.equal(await created1, { actorId: v1.actorId, incarnation: 1, pid: host1.pid });
  assert.is(host1.running.get(v1.actorId), 1);
});

test.run();
