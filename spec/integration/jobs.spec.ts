// Jobs and lifetimes (docs/jobs.md) through real processes: a nats-server, a GCS process with a
// short job timeout, a raylet process, and drivers as separate processes. close() kills what the
// job owns at once and frees the names; a driver killed with SIGKILL loses its owned actors after
// the heartbeat timeout while its detached actor lives on; a driver frozen past the timeout is told
// JOB_FINISHED when it wakes, while one that only holds its own event loop keeps its job (its heartbeat
// runs on a thread) — through a NATS outage longer than the timeout, and beside a neighbour that
// answers its heartbeats with garbage; `orrery kill` kills a detached actor by name or id; `orrery
// list jobs`.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, startLocalCluster, type Cluster, type JobInfo, type LocalCluster } from '../../runtime/index.ts';
import { CounterActor } from '../fixtures/client/actors.ts';
import { runOrrery } from '../helpers/orrery-cli.ts';
import { randomBytes } from 'node:crypto';
import { decode } from '../../protocols/codec.ts';
import { encodeError, encodeOk } from '../../protocols/reply.ts';
import { subjects } from '../../protocols/subjects.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

// Until its heartbeat thread is connected (one beat period after registration) a driver beats on
// its event loop, and a driver starting under tsx beside other work has been seen to go 1.5 s
// without running a timer (its job ended before it had printed its first line): 3 s leaves room.
const JOB_TIMEOUT_MS = 3000;
/** Longer than a job timeout and a beat period or two: what a hold must outlast. */
const HOLD_MS = JOB_TIMEOUT_MS + 1500;
const DRIVER = fileURLToPath(new URL('../fixtures/jobs/driver.ts', import.meta.url));

let server: NatsServerHandle;
let local: LocalCluster;
const drivers: ChildProcess[] = [];
/** What the cluster's processes print (the GCS's word that it is connected again, below). */
const lines: string[] = [];

test.before(async () => {
  server = await startNatsServer({ jetstream: true });
  local = await startLocalCluster({
    transport: 'nats',
    address: server.url,
    nodes: [{ name: 'jobs-node', resources: { CPU: 4 } }],
    jobTimeoutMs: JOB_TIMEOUT_MS,
    onOutput: (line) => lines.push(line),
  });
});

test.after(async () => {
  for (const d of drivers) if (d.exitCode === null && d.signalCode === null) d.kill('SIGKILL');
  await local?.stop();
  await server?.stop();
});

interface Driver {
  readonly child: ChildProcess;
  readonly started: { jobId: string; owned: string; detached: string; pid: number };
  /** Sends a command line and resolves with the next JSON line the driver prints. */
  ask(command: string): Promise<Record<string, string>>;
}

/** A driver process (spec/fixtures/jobs/driver.ts) once it has created its two actors. */
async function startDriver(names: { owned: string; detached: string }, env: Record<string, string> = {}): Promise<Driver> {
  const child = spawn(process.execPath, [...process.execArgv, DRIVER], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ORRERY_ADDRESS: server.url, OWNED_NAME: names.owned, DETACHED_NAME: names.detached, ...env },
  });
  drivers.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, string>> => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`the driver exited: ${stderr}`);
    return JSON.parse(value) as Record<string, string>;
  };
  const started = (await next()) as unknown as Driver['started'];
  return {
    child,
    started,
    ask: (command) => {
      child.stdin!.write(`${command}\n`);
      return next();
    },
  };
}

const jobOf = async (c: Cluster, jobId: string): Promise<JobInfo | undefined> => (await c.jobs()).find((j) => j.jobId === jobId);
const finished = (c: Cluster, jobId: string): Promise<JobInfo> => until(`job ${jobId} FINISHED`, async () => {
  const job = await jobOf(c, jobId);
  return job?.state === 'FINISHED' ? job : undefined;
});

test('close() kills the actors its job owns at once, with a cause naming the job, and frees the name; detached ones live on', async () => {
  const driver = await connect({ address: server.url, job: { name: 'closing' } });
  const jobId = driver.jobId!;
  const web = await driver.actor(CounterActor).options({ name: 'web' }).remote(1);
  const keeper = await driver.actor(CounterActor).options({ name: 'close-keeper', lifetime: 'detached' }).remote(2);
  await Promise.all([web.ready(), keeper.ready()]);
  assert.is((await jobOf(local.cluster, jobId))?.state, 'RUNNING');
  await driver.close();

  // close() resolved once the owned actor was gone: no waiting here
  const infos = await local.cluster.actors();
  const dead = infos.find((a) => a.actorId === web.actorId)!;
  assert.is(dead.state, 'DEAD');
  assert.match(dead.deathCause!, new RegExp(`job ${jobId} finished: the driver closed its connection`));
  assert.is(infos.find((a) => a.actorId === keeper.actorId)!.state, 'ALIVE');
  const job = (await jobOf(local.cluster, jobId))!;
  assert.is(job.state, 'FINISHED');
  assert.is(job.endReason, 'closed');

  // the same driver runs again: the name is free
  const again = await connect({ address: server.url });
  try {
    const web2 = await again.actor(CounterActor).options({ name: 'web' }).remote(1);
    assert.is(await (await web2.ready()).state, 'ALIVE');
  } finally {
    await again.close();
  }
});

test('a driver killed with SIGKILL: its owned actors DEAD after the heartbeat timeout, its detached actor ALIVE, its names free', async () => {
  const driver = await startDriver({ owned: 'crash-web', detached: 'crash-keeper' });
  const { jobId, owned, detached } = driver.started;
  assert.is((await jobOf(local.cluster, jobId))?.pid, driver.child.pid);
  const dying = until('the owned actor DEAD', async () => {
    const a = (await local.cluster.actors()).find((x) => x.actorId === owned);
    return a?.state === 'DEAD' ? a : undefined;
  });
  driver.child.kill('SIGKILL');
  const job = await finished(local.cluster, jobId);
  assert.is(job.endReason, 'heartbeat_timeout');
  const dead = await dying;
  assert.match(dead.deathCause!, new RegExp(`job ${jobId} finished: no heartbeat from the driver for ${JOB_TIMEOUT_MS} ms`));
  const keeper = await local.cluster.getActor('crash-keeper');
  assert.is(keeper.actorId, detached);
  assert.is((await keeper.info()).state, 'ALIVE');
  assert.is(await keeper.call('get'), 2);
  // the name is free for the driver's next run
  const next = await local.cluster.actor(CounterActor).options({ name: 'crash-web' }).remote(0);
  await next.ready();
  await next.kill();
});

test('a driver frozen (SIGSTOP) past the timeout loses its owned actors; woken, it is told JOB_FINISHED', async () => {
  const driver = await startDriver({ owned: 'frozen-web', detached: 'frozen-keeper' });
  const { jobId, owned } = driver.started;
  driver.child.kill('SIGSTOP');
  try {
    await finished(local.cluster, jobId);
    await until('the owned actor DEAD', async () => ((await local.cluster.actors()).find((x) => x.actorId === owned)?.state === 'DEAD' ? true : undefined));
  } finally {
    driver.child.kill('SIGCONT');
  }
  assert.equal(await driver.ask('create'), { create: 'JOB_FINISHED' });
  assert.equal(await driver.ask('call'), { call: 'JOB_FINISHED' });
  driver.child.kill('SIGKILL');
  await (await local.cluster.getActor('frozen-keeper')).kill();
});

test('a driver whose own code holds its event loop for two job timeouts keeps its job and its actors: its heartbeat beats from a thread of its own', async () => {
  const driver = await startDriver({ owned: 'busy-web', detached: 'busy-keeper' });
  const { jobId, owned } = driver.started;
  try {
    await until('the heartbeat beating from its thread', async () => ((await driver.ask('beat')).beat === 'thread' ? true : undefined));
    assert.equal(await driver.ask(`hold ${HOLD_MS}`), { held: HOLD_MS });
    const job = await jobOf(local.cluster, jobId);
    assert.is(job?.state, 'RUNNING', `the job: ${JSON.stringify(job)}`);
    assert.is((await local.cluster.actors()).find((a) => a.actorId === owned)?.state, 'ALIVE');
    assert.equal(await driver.ask('call'), { call: 'ok' });
  } finally {
    driver.child.kill('SIGKILL');
    await (await local.cluster.getActor('busy-keeper')).kill();
  }
});

test("with job: { heartbeat: 'loop' } the same hold ends the job: its beats waited for the loop", async () => {
  const driver = await startDriver({ owned: 'loop-web', detached: 'loop-keeper' }, { JOB_HEARTBEAT: 'loop' });
  const { jobId, owned } = driver.started;
  try {
    assert.equal(await driver.ask('beat'), { beat: 'loop' });
    assert.equal(await driver.ask(`hold ${HOLD_MS}`), { held: HOLD_MS });
    const job = await finished(local.cluster, jobId);
    assert.is(job.endReason, 'heartbeat_timeout');
    await until('the owned actor DEAD', async () => ((await local.cluster.actors()).find((x) => x.actorId === owned)?.state === 'DEAD' ? true : undefined));
  } finally {
    driver.child.kill('SIGKILL');
    await (await local.cluster.getActor('loop-keeper')).kill();
  }
});

test('orrery kill: a detached named actor by name (with --namespace), another by id; an unknown one is ACTOR_NOT_FOUND', async () => {
  const owner = await connect({ address: server.url, namespace: 'ops' });
  const byName = await owner.actor(CounterActor).options({ name: 'lives-on', lifetime: 'detached' }).remote(0);
  const byId = await owner.actor(CounterActor).options({ lifetime: 'detached' }).remote(0);
  await Promise.all([byName.ready(), byId.ready()]);
  await owner.close();
  assert.is((await local.cluster.getActor('lives-on', 'ops')).actorId, byName.actorId, 'it outlived its job');

  const env = { ORRERY_ADDRESS: server.url };
  const wrongNamespace = await runOrrery(['kill', 'lives-on'], env);
  assert.is(wrongNamespace.code, 1);
  assert.match(wrongNamespace.stderr, /\[ACTOR_NOT_FOUND\]/);
  const killed = await runOrrery(['kill', 'lives-on', '--namespace', 'ops'], env);
  assert.is(killed.code, 0, killed.stderr);
  assert.match(killed.stdout, new RegExp(`actor ${byName.actorId} \\(ops/lives-on\\) Counter: DEAD`));
  const json = await runOrrery(['kill', byId.actorId, '--json'], env);
  assert.is(json.code, 0, json.stderr);
  assert.is(JSON.parse(json.stdout).state, 'DEAD');
  const infos = await local.cluster.actors();
  assert.is(infos.find((a) => a.actorId === byName.actorId)!.deathCause, 'killed');
  const usage = await runOrrery(['kill'], env);
  assert.is(usage.code, 2);
});

test('the leading GCS killed while a job runs: a standby takes over, heartbeats resume, the job stays RUNNING and its actor ALIVE', async () => {
  const driver = await connect({ address: server.url, job: { name: 'survivor' } });
  const jobId = driver.jobId!;
  const watch = await connectNatsBus({ servers: server.url, name: 'spec-beats' });
  try {
    const web = await driver.actor(CounterActor).options({ name: 'failover-web' }).remote(5);
    await web.ready();
    let beats = 0;
    watch.subscribe(subjects('default').gcs('job_heartbeat'), (msg) => {
      if ((decode(msg.data).body as { jobId: string }).jobId === jobId) beats++;
    });
    await local.startGcs!();
    await local.killLeaderGcs!();
    // the standby leads once it answers; the outage (lease, then grace) is longer than the job timeout
    await until('the standby serves', () => jobOf(local.cluster, jobId), 60_000);
    beats = 0;
    // two job timeouts of heartbeats (six per timeout) after the takeover
    await until('heartbeats for two timeouts', () => (beats >= 12 ? true : undefined), 60_000);
    assert.is((await jobOf(local.cluster, jobId))!.state, 'RUNNING');
    assert.is((await web.info()).state, 'ALIVE');
    assert.is(await web.call('get'), 5);
    await driver.close();
    assert.is((await web.info().catch((e: unknown) => e)) instanceof Error, true, 'the closed connection asks nothing');
    assert.is((await local.cluster.getActor('failover-web').catch((e: { code?: string }) => e.code)), 'ACTOR_NOT_FOUND', 'its name is free');
  } finally {
    await watch.close();
  }
});

test('orrery list jobs: every job with its state, driver and reason; --filter, --limit and --json as for actors', async () => {
  const env = { ORRERY_ADDRESS: server.url };
  const running = await connect({ address: server.url, job: { name: 'listed' } });
  try {
    await until('the job registered', () => jobOf(local.cluster, running.jobId!));
    const all = await runOrrery(['list', 'jobs', '--json'], env);
    assert.is(all.code, 0, all.stderr);
    const jobs = JSON.parse(all.stdout) as JobInfo[];
    assert.ok(jobs.some((j) => j.jobId === running.jobId && j.state === 'RUNNING' && j.name === 'listed' && j.pid === process.pid));
    assert.ok(jobs.some((j) => j.state === 'FINISHED' && j.endReason === 'heartbeat_timeout'));
    assert.ok(jobs.every((j, i) => i === 0 || jobs[i - 1].jobId < j.jobId), 'in id order: the order they started');

    const finishedOnly = await runOrrery(['list', 'jobs', '--json', '--filter', 'state=finished'], env);
    assert.ok((JSON.parse(finishedOnly.stdout) as JobInfo[]).every((j) => j.state === 'FINISHED'));
    const table = await runOrrery(['list', 'jobs', '--filter', 'name=listed'], env);
    assert.is(table.code, 0, table.stderr);
    const rows = table.stdout.trim().split('\n');
    assert.match(rows[0], /^JOB_ID\s+NAME\s+STATE\s+DRIVER/);
    assert.is(rows.length, 2);
    assert.match(rows[1], new RegExp(`^${running.jobId}\\s+listed\\s+RUNNING`));
    const limited = await runOrrery(['list', 'jobs', '--limit', '1'], env);
    assert.is(limited.stdout.trim().split('\n').length, 2);
    assert.match(limited.stderr, /showing 1 of \d+ jobs/);
    const bad = await runOrrery(['list', 'jobs', '--filter', 'class=x'], env);
    assert.is(bad.code, 2);
  } finally {
    await running.close();
  }
});

test('a NATS outage longer than the job timeout while the heartbeat beats from its thread: the thread reconnects and beats on, and the job outlives a hold after it', async () => {
  const driver = await startDriver({ owned: 'outage-web', detached: 'outage-keeper' });
  const { jobId, owned } = driver.started;
  try {
    await until('the heartbeat beating from its thread', async () => ((await driver.ask('beat')).beat === 'thread' ? true : undefined));
    const from = lines.length;
    // SIGKILL, down for longer than a job timeout, then the same server (and JetStream store) on the same port
    await server.restart({ downMs: HOLD_MS });
    await until('the GCS connected again', async () => (lines.slice(from).some((l) => l.includes('the GCS is connected again')) ? true : undefined), 30_000);
    await until('the job listed RUNNING after the outage', async () => ((await jobOf(local.cluster, jobId).catch(() => undefined))?.state === 'RUNNING' ? true : undefined), 30_000);
    // only the thread's beats can keep the job through this: the loop is held, and the job got a
    // fresh window when the GCS was connected again
    assert.equal(await driver.ask(`hold ${HOLD_MS}`), { held: HOLD_MS });
    const job = await jobOf(local.cluster, jobId);
    assert.is(job?.state, 'RUNNING', `the job: ${JSON.stringify(job)}`);
    assert.equal(await driver.ask('beat'), { beat: 'thread' }, 'the thread did not give up on its connection');
    assert.is((await local.cluster.actors()).find((a) => a.actorId === owned)?.state, 'ALIVE');
    await until('a call answered', async () => ((await driver.ask('call')).call === 'ok' ? true : undefined));
  } finally {
    driver.child.kill('SIGKILL');
    await (await local.cluster.getActor('outage-keeper')).kill();
  }
});

test('a neighbour on an unsecured bus answers every heartbeat first, with garbage: the driver keeps its thread, its job and its actors', async () => {
  const driver = await startDriver({ owned: 'garbage-web', detached: 'garbage-keeper' });
  const { jobId, owned } = driver.started;
  const neighbour = await connectNatsBus({ servers: server.url, name: 'spec-hostile' });
  // undecodable bytes, nothing at all, a reply of the wrong shape, an error that is not the job's
  const garbage = [() => randomBytes(64), () => new Uint8Array(0), () => encodeOk('not a heartbeat answer'), () => encodeOk([1, 2, 3]), () => encodeError(Object.assign(new Error('made up'), { code: 'INTERNAL' }))];
  let answered = 0;
  try {
    await until('the heartbeat beating from its thread', async () => ((await driver.ask('beat')).beat === 'thread' ? true : undefined));
    neighbour.subscribe(subjects('default').gcs('job_heartbeat'), (msg) => {
      if ((decode(msg.data).body as { jobId?: string }).jobId !== jobId) return;
      msg.respond(garbage[answered++ % garbage.length]());
    });
    await neighbour.flush();
    assert.equal(await driver.ask(`hold ${HOLD_MS}`), { held: HOLD_MS });
    // every kind of garbage was sent at least once while the loop was held
    await until('every kind of garbage answered', async () => (answered >= garbage.length ? true : undefined));
    const job = await jobOf(local.cluster, jobId);
    assert.is(job?.state, 'RUNNING', `the job: ${JSON.stringify(job)}`);
    assert.equal(await driver.ask('beat'), { beat: 'thread' });
    assert.is((await local.cluster.actors()).find((a) => a.actorId === owned)?.state, 'ALIVE');
    assert.equal(await driver.ask('call'), { call: 'ok' });
    assert.equal(await driver.ask('create'), { create: 'ok' }, 'the connection is not finished');
  } finally {
    await neighbour.close();
    driver.child.kill('SIGKILL');
    await (await local.cluster.getActor('garbage-keeper')).kill();
  }
});

test.run();
