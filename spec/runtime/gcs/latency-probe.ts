// How long the GCS takes to answer a request, measured from a process of its own, so the numbers are
// the GCS's and not those of a busy test process: a child sends `gcs.list_nodes` every `everyMs` over
// its own NATS connection. Between two GCS requests it asks a control responder — a trivial process
// that answers at once — so a machine too loaded to answer anything quickly shows in the control's
// numbers as well, and a spec can tell the GCS's delays from the machine's.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { encode } from '../../../protocols/codec.ts';
import { subjects } from '../../../protocols/subjects.ts';

export interface Latencies {
  readonly count: number;
  readonly worst: number;
  readonly p99: number;
  readonly median: number;
}

const PROBE = `
import { connect } from '@nats-io/transport-node';
const [address, subject, b64, control, everyMs] = process.argv.slice(1);
const data = Buffer.from(b64, 'base64');
const nc = await connect({ servers: address });
const gcs = [];
const ctl = [];
let running = true;
process.stdin.on('data', () => (running = false));
process.stdin.on('end', () => (running = false));
const time = async (s, d, into) => {
  const t0 = performance.now();
  await nc.request(s, d, { timeout: 10000 });
  into.push(performance.now() - t0);
};
await time(control, data, ctl);
console.log('PROBING');
while (running) {
  await time(subject, data, gcs);
  await time(control, data, ctl);
  await new Promise((r) => setTimeout(r, Number(everyMs)));
}
await nc.close();
console.log('RESULT ' + JSON.stringify({ gcs, ctl }));
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

function child(code: string, args: string[], ready: string): Promise<{ proc: ChildProcess; lines: ReturnType<typeof createInterface> }> {
  const proc = spawn(process.execPath, ['--input-type=module', '-e', code, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout! });
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`a latency probe process exited (${code})`)));
    lines.on('line', (line) => {
      if (line === ready) resolve({ proc, lines });
    });
  });
}

function summary(values: number[]): Latencies {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { count: sorted.length, worst: sorted.at(-1) ?? 0, p99: at(0.99), median: at(0.5) };
}

/** Starts probing `gcs.list_nodes` of `cluster` at `address`; resolves once requests are going out. */
export async function startLatencyProbe(opts: { address: string; cluster?: string; everyMs?: number }): Promise<{ stop(): Promise<{ gcs: Latencies; control: Latencies }> }> {
  const subject = subjects(opts.cluster ?? 'default').gcs('list_nodes');
  const control = `probe.control.${randomBytes(4).toString('hex')}`;
  const data = Buffer.from(encode('list_nodes', {})).toString('base64');
  const responder = await child(RESPONDER, [opts.address, control], 'READY');
  const probe = await child(PROBE, [opts.address, subject, data, control, String(opts.everyMs ?? 5)], 'PROBING');
  const result = new Promise<{ gcs: number[]; ctl: number[] }>((resolve) => {
    probe.lines.on('line', (line) => {
      if (line.startsWith('RESULT ')) resolve(JSON.parse(line.slice(7)) as { gcs: number[]; ctl: number[] });
    });
  });
  return {
    async stop() {
      probe.proc.stdin!.end('stop\n');
      const { gcs, ctl } = await result;
      responder.proc.stdin!.end();
      return { gcs: summary(gcs), control: summary(ctl) };
    },
  };
}
