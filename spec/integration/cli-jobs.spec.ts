// `orrery start --head --job-timeout-ms N` as users run it: the GCS it starts ends a job whose
// heartbeats stopped after N ms, not the default 30 s — a driver killed with SIGKILL loses its owned
// actor (cause naming the job) well before the default would have allowed, its detached actor lives.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type Cluster } from '../../runtime/index.ts';
import { runOrrery } from '../helpers/orrery-cli.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const DRIVER = fileURLToPath(new URL('../fixtures/jobs/driver.ts', import.meta.url));
// a driver beats on its event loop until its heartbeat thread starts, and one starting under tsx at
// load 11 went 1.5 s without a beat (its job ended before it printed its first line): 3 s leaves room
const JOB_TIMEOUT_MS = 3000;
/** The GCS's default job timeout: what the flag must have replaced. */
const DEFAULT_JOB_TIMEOUT_MS = 30_000;

const runDir = mkdtempSync(join(tmpdir(), 'orrery-cli-jobs-'));
let server: NatsServerHandle;
let client: Cluster;
let driver: ChildProcess | undefined;
let env: NodeJS.ProcessEnv;

test.before(async () => {
  server = await startNatsServer({ jetstream: true });
  env = { ORRERY_ADDRESS: server.url, ORRERY_RUN_DIR: runDir };
  const head = await runOrrery(['start', '--head', '--num-cpus', '4', '--job-timeout-ms', String(JOB_TIMEOUT_MS)], env);
  assert.is(head.code, 0, head.stderr);
  client = await connect({ address: server.url, job: false });
});

test.after(async () => {
  if (driver && driver.exitCode === null && driver.signalCode === null) driver.kill('SIGKILL');
  await client?.close();
  await runOrrery(['stop'], env);
  await server?.stop();
  rmSync(runDir, { recursive: true, force: true });
});

test('a driver killed with SIGKILL: its owned actor dies after the timeout given to orrery start, its detached one lives', async () => {
  driver = spawn(process.execPath, [...process.execArgv, DRIVER], { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env, OWNED_NAME: 'cli-owned', DETACHED_NAME: 'cli-detached' } });
  const first = await createInterface({ input: driver.stdout! })[Symbol.asyncIterator]().next();
  const started = JSON.parse(String(first.value)) as { jobId: string; owned: string; detached: string };
  driver.kill('SIGKILL');
  const killedAt = Date.now();
  const dead = await until(
    'the owned actor DEAD',
    async () => {
      const info = (await client.actors()).find((a) => a.actorId === started.owned);
      return info?.state === 'DEAD' ? info : undefined;
    },
    DEFAULT_JOB_TIMEOUT_MS - 5_000,
  );
  assert.ok(Date.now() - killedAt < DEFAULT_JOB_TIMEOUT_MS, 'ended by the shorter timeout, not the default');
  assert.match(dead.deathCause ?? '', started.jobId);
  const detached = (await client.actors()).find((a) => a.actorId === started.detached);
  assert.is(detached?.state, 'ALIVE');
});

test.run();
