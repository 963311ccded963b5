/**
 * bench:e2e --nodes, its reference (issue 18, part 4): the same creates through the least a cluster
 * could do for them, measured on the same nats-server right after orrery's cluster of that size.
 * The driver (this process, raw nats.js) sends as many requests as the orrery batch created actors,
 * at the rate orrery created them (never more in flight than it had).
 * A GCS-shaped dispatcher (bench/fixtures/relay-gcs.mjs) sends each on to one of N raylet-shaped
 * relays in turn (bench/fixtures/relay-raylet.mjs). Each relay hands the request over IPC to a forked
 * child and replies with its answer: two wake-ups per turn, as a raylet's create_actor and its worker
 * host's answer are.
 *
 * The relays' CPU and wake-ups per request are what orrery's raylets' are compared with. The
 * reference has no codec, leases, actors or heartbeats, so its 16 ÷ 4 ratio is what the work's shape
 * and this machine give, whatever the code. Measured here on 2 cores it was 3×: a relay's wake-up
 * costs about 3× as much among 16 relays as among 4, for the same work (docs/benchmarks.md).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { connect } from '@nats-io/transport-node';
import { stopChild } from './bench-run.ts';
import { runPool } from './e2e-stats.ts';
import { cpuSeconds, voluntarySwitches } from './proc-cpu.ts';

export interface RelayRun {
  readonly requests: number;
  readonly perSecond: number;
  /** The relays' CPU per request, summed over them (ms). */
  readonly relaysMsPerRequest: number;
  /** Their main threads' voluntary context switches per request, summed. */
  readonly wakeupsPerRequest: number;
  readonly dispatcherMsPerRequest: number;
}

const SUBJECT = 'bench.relay.create';
const PREFIX = 'bench.relay.node';

async function startFixture(name: string, args: readonly string[], nodeFlags: readonly string[]): Promise<ChildProcess> {
  const entry = fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
  const child = spawn(process.execPath, [...nodeFlags, entry, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 30 s`)), 30_000);
    child.once('exit', (code, sig) => reject(new Error(`${name} exited (${sig ?? code}) before it was ready`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('READY')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  return child;
}

/** `nodes` relays and their dispatcher on `address`; a warm batch, then `requests` measured, `inFlight` at a time. */
export async function measureRelays(address: string, nodes: number, size: { warm: number; requests: number; inFlight: number; perSecond: number }, nodeFlags: readonly string[]): Promise<RelayRun> {
  const children: ChildProcess[] = [];
  const nc = await connect({ servers: address, name: 'orrery-bench-relay-driver' });
  try {
    const relays = await Promise.all(Array.from({ length: nodes }, (_, i) => startFixture('relay-raylet.mjs', [address, `${PREFIX}.${i}`], nodeFlags)));
    children.push(...relays);
    const dispatcher = await startFixture('relay-gcs.mjs', [address, SUBJECT, PREFIX, String(nodes)], nodeFlags);
    children.push(dispatcher);
    const payload = new Uint8Array(200);
    const create = async (): Promise<void> => {
      const reply = await nc.request(SUBJECT, payload, { timeout: 60_000 });
      if (reply.data.length === 0) throw new Error('a relay did not answer within 30 s');
    };
    const failed = (results: unknown[]): void => {
      const errors = results.filter((r): r is { error: unknown } => typeof r === 'object' && r !== null && 'error' in r);
      if (errors.length > 0) throw new Error(`${errors.length} reference requests failed; the first: ${String(errors[0].error)}`);
    };
    failed(await runPool(size.warm, size.inFlight, create));
    const cpu0 = relays.map((r) => cpuSeconds(r.pid!));
    const wake0 = relays.map((r) => voluntarySwitches(r.pid!));
    const d0 = cpuSeconds(dispatcher.pid!);
    const start = performance.now();
    // at orrery's own rate: request i leaves no earlier than i / perSecond after the start
    const paced = async (i: number): Promise<void> => {
      const wait = start + (1000 * i) / size.perSecond - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await create();
    };
    failed(await runPool(size.requests, size.inFlight, paced));
    const seconds = (performance.now() - start) / 1000;
    const cpu = relays.reduce((sum, r, i) => sum + cpuSeconds(r.pid!) - cpu0[i], 0);
    const wakeups = relays.reduce((sum, r, i) => sum + voluntarySwitches(r.pid!) - wake0[i], 0);
    return {
      requests: size.requests,
      perSecond: size.requests / seconds,
      relaysMsPerRequest: (1000 * cpu) / size.requests,
      wakeupsPerRequest: wakeups / size.requests,
      dispatcherMsPerRequest: (1000 * (cpuSeconds(dispatcher.pid!) - d0)) / size.requests,
    };
  } finally {
    await Promise.all(children.map((c) => stopChild(c)));
    await nc.close();
  }
}
