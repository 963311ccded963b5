import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { JobInfoWire } from '../../../protocols/messages/job.ts';
import type { GcsOptions } from '../../../runtime/gcs/index.ts';
import { JobDirectory } from '../../../runtime/gcs/jobs.ts';
import { MemoryStore } from '../../../runtime/gcs/store.ts';
import type { EventPublisher } from '../../../runtime/gcs/events.ts';
import type { LivenessClock } from '../../../runtime/gcs/liveness.ts';
import { Harness } from './support.ts';

/**
 * Jobs in the GCS (docs/jobs.md) against stub raylets on the memory bus: registration, ownership by
 * secret, finishing (close or heartbeat timeout) killing owned actors and removing owned groups with
 * a cause naming the job, detached ones left alone, names freed, creations under a finished job
 * refused. The JobDirectory alone under a hand-moved clock: windows only while serving, none while
 * the GCS's connection is down. The same through real processes: spec/integration/jobs.spec.ts.
 */
async function withGcs(opts: Partial<GcsOptions>, fn: (h: Harness) => Promise<void>): Promise<void> {
  const h = await Harness.start(opts);
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

const SECRET = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const code = { moduleUrl: 'file:///spec/actors.ts', className: 'Counter', args: [] };

const registerJob = (h: Harness, jobId: string, secret = SECRET) =>
  h.request('register_job', 'register_job', { jobId, secret, host: 'spec-host', pid: 42, namespace: 'default', name: 'spec job' });
const actorUnder = (h: Harness, actorId: string, jobId: string | undefined, options: Record<string, unknown> = {}, name?: string) =>
  h.request('register_actor', 'register_actor', { actorId, code, namespace: 'default', options, ...(name ? { name } : {}), ...(jobId ? { jobId } : {}) });
const jobEvent = (h: Harness, type: string, jobId: string): Promise<JobInfoWire> =>
  h.events.wait((e) => e.type === type && e.job?.jobId === jobId, `${type} ${jobId}`).then((e) => e.job!);

test('register_job: RUNNING, job_started, listed; heartbeats answered; registering again with its secret is the same job', () =>
  withGcs({}, async (h) => {
    const reply = await registerJob(h, 'j1');
    assert.is(reply.job.state, 'RUNNING');
    assert.is(reply.job.host, 'spec-host');
    assert.is(reply.job.pid, 42);
    assert.ok(reply.heartbeatMs >= 10 && reply.heartbeatMs < reply.timeoutMs, 'several beats per timeout');
    const started = await jobEvent(h, 'job_started', 'j1');
    assert.is(started.name, 'spec job');
    assert.equal((await h.request('list_jobs', 'list_jobs', {})).items.map((j: JobInfoWire) => j.jobId), ['j1']);
    assert.equal(await h.request('job_heartbeat', 'job_heartbeat', { jobId: 'j1', secret: SECRET }), { state: 'RUNNING' });
    assert.is((await registerJob(h, 'j1')).job.startedAt, reply.job.startedAt);
    assert.is(h.events.got.filter((e) => e.type === 'job_started').length, 1, 'one job_started');
  }));

test("another secret may not take over, heartbeat or finish a job: JOB_NOT_OWNED, counted, nothing changes", () =>
  withGcs({}, async (h) => {
    await registerJob(h, 'j1');
    assert.is((await h.refusal('register_job', 'register_job', { jobId: 'j1', secret: OTHER, host: 'x', pid: 1, namespace: 'default' })).code, 'JOB_NOT_OWNED');
    assert.is((await h.refusal('job_heartbeat', 'job_heartbeat', { jobId: 'j1', secret: OTHER })).code, 'JOB_NOT_OWNED');
    assert.is((await h.refusal('finish_job', 'finish_job', { jobId: 'j1', secret: OTHER })).code, 'JOB_NOT_OWNED');
    assert.is((await h.refusal('finish_job', 'finish_job', { jobId: 'nope', secret: SECRET })).code, 'JOB_NOT_FOUND');
    assert.is(h.gcs.wireErrors().byCode.JOB_NOT_OWNED, 3);
    assert.is(h.gcs.snapshot().jobs[0].state, 'RUNNING');
  }));

test('finish_job: owned actors DEAD with a cause naming the job, names free, owned groups REMOVED; detached ones stay', () =>
  withGcs({}, async (h) => {
    await h.addNode({ nodeId: 'n1', cpu: 4 });
    await registerJob(h, 'j1');
    await actorUnder(h, 'a1', 'j1', {}, 'web');
    await actorUnder(h, 'a2', 'j1', { lifetime: 'detached' }, 'keeper');
    await actorUnder(h, 'a3', undefined);
    await h.request('create_pg', 'create_pg', { pgId: 'pg1', namespace: 'default', options: { bundles: [{ CPU: 1 }] }, jobId: 'j1' });
    await h.request('create_pg', 'create_pg', { pgId: 'pg2', namespace: 'default', options: { bundles: [{ CPU: 1 }], lifetime: 'detached' }, jobId: 'j1' });
    for (const id of ['a1', 'a2', 'a3']) await h.reached(id, 'ALIVE');
    const a1 = await h.actor('a1');
    assert.is(a1.jobId, 'j1');
    assert.is(a1.lifetime, undefined);
    assert.is((await h.actor('a2')).lifetime, 'detached');

    const finished = await h.request('finish_job', 'finish_job', { jobId: 'j1', secret: SECRET });
    assert.is(finished.state, 'FINISHED');
    assert.is(finished.endReason, 'closed');
    // answered once what it owned is gone
    const dead = await h.actor('a1');
    assert.is(dead.state, 'DEAD');
    assert.match(dead.deathCause!, /job j1 finished/);
    assert.is((await h.actor('a2')).state, 'ALIVE');
    assert.is((await h.actor('a3')).state, 'ALIVE');
    assert.is((await h.request('get_pg', 'get_pg', { pgId: 'pg1' })).state, 'REMOVED');
    assert.match((await h.request('get_pg', 'get_pg', { pgId: 'pg1' })).removedCause, /job j1 finished/);
    assert.is.not((await h.request('get_pg', 'get_pg', { pgId: 'pg2' })).state, 'REMOVED');
    assert.is((await jobEvent(h, 'job_finished', 'j1')).endReason, 'closed');

    // the name is free: another job takes it
    await registerJob(h, 'j2', OTHER);
    assert.is((await actorUnder(h, 'a4', 'j2', {}, 'web')).actorId, 'a4');
    // the finished job creates nothing more and is told so on its next beat
    assert.is((await h.refusal('register_actor', 'register_actor', { actorId: 'a5', code, namespace: 'default', options: {}, jobId: 'j1' })).code, 'JOB_FINISHED');
    assert.is((await h.refusal('create_pg', 'create_pg', { pgId: 'pg3', namespace: 'default', options: { bundles: [{ CPU: 1 }] }, jobId: 'j1' })).code, 'JOB_FINISHED');
    assert.is((await h.refusal('job_heartbeat', 'job_heartbeat', { jobId: 'j1', secret: SECRET })).code, 'JOB_FINISHED');
    assert.is((await h.refusal('register_job', 'register_job', { jobId: 'j1', secret: SECRET, host: 'x', pid: 1, namespace: 'default' })).code, 'JOB_FINISHED');
    // finishing again answers the same
    assert.is((await h.request('finish_job', 'finish_job', { jobId: 'j1', secret: SECRET })).endedAt, finished.endedAt);
  }));

test('an unknown job is refused at creation (JOB_NOT_FOUND); a bad lifetime is INVALID_OPTION', () =>
  withGcs({}, async (h) => {
    await h.addNode({ nodeId: 'n1', cpu: 4 });
    assert.is((await h.refusal('register_actor', 'register_actor', { actorId: 'a1', code, namespace: 'default', options: {}, jobId: 'ghost' })).code, 'JOB_NOT_FOUND');
    assert.is((await h.refusal('register_actor', 'register_actor', { actorId: 'a1', code, namespace: 'default', options: { lifetime: 'forever' } })).code, 'INVALID_OPTION');
    assert.is((await h.refusal('create_pg', 'create_pg', { pgId: 'pg1', namespace: 'default', options: { bundles: [{ CPU: 1 }], lifetime: 1 } })).code, 'INVALID_OPTION');
    assert.equal(h.gcs.snapshot().actors, []);
  }));

test('heartbeats keep a job RUNNING past its timeout; when they stop it is FINISHED (heartbeat_timeout) and its actors die', () =>
  withGcs({ jobTimeoutMs: 300 }, async (h) => {
    await h.addNode({ nodeId: 'n1', cpu: 4 });
    const { heartbeatMs } = await registerJob(h, 'j1');
    await actorUnder(h, 'a1', 'j1');
    await h.reached('a1', 'ALIVE');
    // beat for three timeouts: still RUNNING
    const until = Date.now() + 900;
    while (Date.now() < until) {
      await h.request('job_heartbeat', 'job_heartbeat', { jobId: 'j1', secret: SECRET });
      await new Promise((r) => setTimeout(r, heartbeatMs));
    }
    assert.is(h.gcs.snapshot().jobs[0].state, 'RUNNING');
    assert.is((await h.actor('a1')).state, 'ALIVE');
    // silence
    const ended = await jobEvent(h, 'job_finished', 'j1');
    assert.is(ended.endReason, 'heartbeat_timeout');
    const dead = await h.reached('a1', 'DEAD');
    assert.match(dead.deathCause!, /job j1 finished: no heartbeat from the driver for 300 ms/);
  }));

// ---- the directory alone, under a hand-moved clock ----

class HandClock implements LivenessClock {
  t = 0;
  timers: { at: number; fn: () => void }[] = [];
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const timer = { at: this.t + ms, fn };
    this.timers.push(timer);
    return timer;
  }
  clearTimeout(handle: unknown): void {
    this.timers = this.timers.filter((t) => t !== handle);
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers.splice(this.timers.indexOf(due), 1);
      this.t = due.at;
      due.fn();
    }
    this.t = end;
  }
}

function directory(store = new MemoryStore()) {
  const clock = new HandClock();
  const ended: string[][] = [];
  const events: { type: string; job: JobInfoWire }[] = [];
  const jobs = new JobDirectory({
    store,
    events: { job: (type: string, job: JobInfoWire) => events.push({ type, job }) } as unknown as EventPublisher,
    log: () => {},
    timeoutMs: 1000,
    clock,
    endOwned: async (ids) => {
      ended.push([...ids]);
      return { actors: 0, groups: 0 };
    },
  });
  return { jobs, clock, ended, events, store };
}
const body = (jobId: string) => ({ jobId, secret: SECRET, host: 'h', pid: 1, namespace: 'default' });

test('JobDirectory: no window before the GCS serves; a fresh one from then (a recovered job is not finished for the recovery)', () => {
  const first = directory();
  first.jobs.register(body('j1'));
  // a second GCS on the same store: the job comes back RUNNING
  const { jobs, clock, ended } = directory(first.store);
  assert.is(jobs.get('j1')!.state, 'RUNNING');
  clock.advance(5000);
  assert.is(jobs.get('j1')!.state, 'RUNNING', 'no timeout while recovering');
  void jobs.serve();
  clock.advance(900);
  jobs.heartbeat({ jobId: 'j1', secret: SECRET });
  clock.advance(900);
  assert.is(jobs.get('j1')!.state, 'RUNNING');
  clock.advance(200);
  assert.is(jobs.get('j1')!.state, 'FINISHED');
  assert.equal(ended, [['j1']]);
});

test('JobDirectory: a timeout while the GCS cannot hear the bus ends nothing; back on the bus, a fresh window', () => {
  const { jobs, clock } = directory();
  void jobs.serve();
  jobs.register(body('j1'));
  jobs.connectionChanged('disconnected');
  clock.advance(3000);
  assert.is(jobs.get('j1')!.state, 'RUNNING');
  jobs.connectionChanged('reconnected');
  clock.advance(999);
  assert.is(jobs.get('j1')!.state, 'RUNNING');
  clock.advance(1);
  assert.is(jobs.get('j1')!.state, 'FINISHED');
  assert.is(jobs.get('j1')!.endReason, 'heartbeat_timeout');
});

test('JobDirectory: jobs FINISHED in the store have what they owned ended again when the GCS serves; the secret is stored hashed', () => {
  const first = directory();
  void first.jobs.serve();
  first.jobs.register(body('j1'));
  first.jobs.register(body('j2'));
  first.clock.advance(2000);
  const record = first.store.jobs().find((j) => j.info.jobId === 'j1')!;
  assert.is(record.info.state, 'FINISHED');
  assert.ok(!JSON.stringify(record).includes(SECRET), 'the secret itself is not stored');
  const second = directory(first.store);
  void second.jobs.serve();
  assert.equal(second.ended, [['j1', 'j2']]);
});

test('JobDirectory: finished jobs past the bound are forgotten, from the store too', () => {
  const store = new MemoryStore();
  const jobs = new JobDirectory({
    store,
    events: { job: () => {} } as unknown as EventPublisher,
    log: () => {},
    timeoutMs: 1000,
    maxFinishedJobs: 2,
    clock: new HandClock(),
    endOwned: async () => ({ actors: 0, groups: 0 }),
  });
  for (const id of ['j1', 'j2', 'j3']) {
    jobs.register(body(id));
    void jobs.finish({ jobId: id, secret: SECRET });
  }
  assert.equal(jobs.list().map((j) => j.jobId), ['j2', 'j3']);
  assert.equal(store.jobs().map((j) => j.info.jobId).sort(), ['j2', 'j3']);
});

test.run();
