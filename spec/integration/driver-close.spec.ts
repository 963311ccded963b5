// A driver that closes while its nats-server is gone (SIGKILLed): close() resolves and the driver's
// process exits by itself. Real processes: a nats-server, a GCS and a raylet process, and the
// driver as a process of its own (spec/fixtures/jobs/closing-driver.ts).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startLocalCluster, type LocalCluster } from '../../runtime/index.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';

const DRIVER = fileURLToPath(new URL('../fixtures/jobs/closing-driver.ts', import.meta.url));
/** How long the driver may take to exit once told to close: a bound so that a hang fails the spec, not the suite. */
const EXIT_BOUND_MS = 30_000;

let server: NatsServerHandle | undefined;
let local: LocalCluster | undefined;

test.after(async () => {
  await local?.stop();
  await server?.stop();
});

test('a driver told to close while its nats-server is down closes, and its process exits by itself', async () => {
  server = await startNatsServer();
  local = await startLocalCluster({ transport: 'nats', address: server.url, nodes: [{ name: 'close-node', resources: { CPU: 2 } }] });
  const child = spawn(process.execPath, [...process.execArgv, DRIVER], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ORRERY_ADDRESS: server.url } });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const next = async (): Promise<Record<string, unknown>> => {
    const { value, done } = await lines.next();
    if (done) throw new Error(`the driver's output ended: ${stderr}`);
    return JSON.parse(value) as Record<string, unknown>;
  };
  try {
    assert.equal(await next(), { ready: true }, 'the driver created and called its actor');
    // the server dies with no goodbye; the driver's connection is down, reconnecting
    process.kill(server.pid, 'SIGKILL');
    await server.stop();
    child.stdin!.write('close\n');
    let closedLine: Record<string, unknown> | undefined;
    const closing = (async () => {
      closedLine = await next();
      return exited;
    })();
    let bound: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((resolve) => (bound = setTimeout(() => resolve('hung'), EXIT_BOUND_MS)));
    const outcome = await Promise.race([closing, hung]).finally(() => clearTimeout(bound));
    assert.ok(outcome !== 'hung', closedLine === undefined
      ? `close() had not resolved ${EXIT_BOUND_MS / 1000} s after the driver was told to close`
      : `the driver was still running ${EXIT_BOUND_MS / 1000} s after close() resolved: something (a reconnecting connection) kept it alive`);
    assert.equal(closedLine, { closed: true }, 'close() resolved');
    assert.equal(outcome, [0, null], `the driver exited cleanly: ${stderr}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

test.run();
