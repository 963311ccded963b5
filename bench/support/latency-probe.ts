// How long the GCS takes to answer a request, measured from a process of its own, so the numbers are
// the GCS's and not those of a busy driver or test process: a child sends `gcs.list_nodes` every
// `everyMs` over its own NATS connection. Between two GCS requests it asks a control responder — a
// trivial process that answers at once — so a machine too loaded to answer anything quickly shows in
// the control's numbers as well, and the GCS's delays can be told from the machine's.
//
// A request that fails (no answer within 10 s, or no responder) does not stop the probe: it is
// counted in `failures` and probing goes on. A probe process that dies makes stop() reject, naming
// its exit code, rather than wait for a result that will never come. Used by bench/gcs.ts and
// spec/integration/events.spec.ts.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { encode } from '../../protocols/codec.ts';
import { subjects } from '../../protocols/subjects.ts';

export interface Latencies {
  readonly count: number;
  readonly worst: number;
  readonly p99: number;
  readonly median: number;
}

/** One request the probe sent that got no answer. */
export interface ProbeFailure {
  readonly to: 'gcs' | 'control';
  /** How long it waited before the request failed. */
  readonly ms: number;
  readonly error: string;
}

export interface ProbeResult {
  readonly gcs: Latencies;
  readonly control: Latencies;
  /** Requests that got no answer; empty when every one was answered. */
  readonly failures: readonly ProbeFailure[];
}

export interface LatencyProbe {
  /** Stops probing and resolves with what was measured; rejects if the probe process died. */
  stop(): Promise<ProbeResult>;
  /** Kills both processes at once (synchronous: usable in an 'exit' handler); stop() then rejects. */
  kill(): void;
}

const REQUEST_TIMEOUT_MS = 10_000;
/** Longest stop() waits for the result: one request in flight to each, and some. */
const STOP_TIMEOUT_MS = 2 * REQUEST_TIMEOUT_MS + 10_000;

const PROBE = `
import { connect } from '@nats-io/transport-node';
const [address, subject, b64, control, everyMs, timeoutMs] = process.argv.slice(1);
const data = Buffer.from(b64, 'base64');
const nc = await connect({ servers: address });
const gcs = [];
const ctl = [];
const failures = [];
let running = true;
process.stdin.on('data', () => (running = false));
process.stdin.on('end', () => (running = false));
const time = async (to, s, into) => {
  const t0 = performance.now();
  try {
    await nc.request(s, data, { timeout: Number(timeoutMs) });
    into.push(performance.now() - t0);
  } catch (err) {
    failures.push({ to, ms: performance.now() - t0, error: String(err?.message ?? err) });
  }
};
await nc.request(control, data, { timeout: Number(timeoutMs) });
console.log('PROBING');
while (running) {
  await time('gcs', subject, gcs);
  await time('control', control, ctl);
  await new Promise((r) => setTimeout(r, Number(everyMs)));
}
await nc.close();
console.log('RESULT ' + JSON.stringify({ gcs, ctl, failures }));
`;

const RESPONDER = `
import { connect } from '@nats-io/transport-node';
const [address, subject] = process.argv.slice(1);
const nc = await connect({ servers: address });
nc.subscribe(subject, { callback: (_err, msg) => msg.respond(msg.data) });
await nc.flush();
console.log('READY');
process.stdin.on('end', async () => { await nc.close(); process.exit(0); });
process.stdin.resume();
`;

interface Child {
  readonly proc: ChildProcess;
  readonly lines: ReturnType<typeof createInterface>;
  /** Resolves with the exit code (or signal) when the process exits. */
  readonly exited: Promise<string>;
}

function child(what: string, code: string, args: string[], ready: string): Promise<Child> {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', code, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout! });
  const exited = new Promise<string>((resolve) => proc.once('exit', (code, signal) => resolve(String(signal ?? code))));
  return new Promise((resolve, reject) => {
    void exited.then((how) => reject(new Error(`the latency probe's ${what} process exited (${how}) before it was ready`)));
    lines.on('line', (line) => {
      if (line === ready) resolve({ proc, lines, exited });
    });
  });
}

function summary(values: number[]): Latencies {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { count: sorted.length, worst: sorted.at(-1) ?? 0, p99: at(0.99), median: at(0.5) };
}

const kill = (c: Child | undefined): void => {
  if (c && c.proc.exitCode === null && c.proc.signalCode === null) c.proc.kill('SIGKILL');
};

/** Starts probing `gcs.list_nodes` of `cluster` at `address`; resolves once requests are going out. */
export async function startLatencyProbe(opts: { address: string; cluster?: string; everyMs?: number }): Promise<LatencyProbe> {
  const subject = subjects(opts.cluster ?? 'default').gcs('list_nodes');
  const control = `probe.control.${randomBytes(4).toString('hex')}`;
  const data = Buffer.from(encode('list_nodes', {})).toString('base64');
  const responder = await child('control responder', RESPONDER, [opts.address, control], 'READY');
  let probe: Child;
  try {
    probe = await child('probe', PROBE, [opts.address, subject, data, control, String(opts.everyMs ?? 5), String(REQUEST_TIMEOUT_MS)], 'PROBING');
  } catch (err) {
    kill(responder);
    throw err;
  }
  const result = new Promise<{ gcs: number[]; ctl: number[]; failures: ProbeFailure[] }>((resolve, reject) => {
    probe.lines.on('line', (line) => {
      if (line.startsWith('RESULT ')) resolve(JSON.parse(line.slice(7)) as { gcs: number[]; ctl: number[]; failures: ProbeFailure[] });
    });
    // 'close' comes after the process exited and its stdout ended, so after its last line
    probe.proc.once('close', (code, signal) => reject(new Error(`the latency probe process exited (${signal ?? code}) without a result`)));
  });
  result.catch(() => undefined); // rejected only for stop() to report
  return {
    async stop() {
      if (probe.proc.exitCode === null && probe.proc.signalCode === null) probe.proc.stdin!.end('stop\n');
      let timer: NodeJS.Timeout | undefined;
      try {
        const { gcs, ctl, failures } = await Promise.race([
          result,
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new Error(`the latency probe gave no result within ${STOP_TIMEOUT_MS / 1000} s of being stopped`)), STOP_TIMEOUT_MS);
          }),
        ]);
        return { gcs: summary(gcs), control: summary(ctl), failures };
      } finally {
        clearTimeout(timer);
        kill(probe);
        if (responder.proc.exitCode === null && responder.proc.signalCode === null) responder.proc.stdin!.end();
      }
    },
    kill() {
      kill(probe);
      kill(responder);
    },
  };
}
