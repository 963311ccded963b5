// How long the GCS takes to answer a request, measured from a process of its own, so the numbers are
// the GCS's and not those of a busy test process: a child sends the request every `everyMs` over its
// own NATS connection and reports the round trips when told to stop.
import { spawn } from 'node:child_process';
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
const [address, subject, b64, everyMs] = process.argv.slice(1);
const data = Buffer.from(b64, 'base64');
const nc = await connect({ servers: address });
const rtts = [];
let running = true;
process.stdin.on('data', () => (running = false));
process.stdin.on('end', () => (running = false));
console.log('PROBING');
while (running) {
  const t0 = performance.now();
  await nc.request(subject, data, { timeout: 10000 });
  rtts.push(performance.now() - t0);
  await new Promise((r) => setTimeout(r, Number(everyMs)));
}
await nc.close();
console.log('RESULT ' + JSON.stringify(rtts));
`;

/** Starts probing `gcs.list_nodes` of `cluster` at `address`; resolves once the first request is out. */
export async function startLatencyProbe(opts: { address: string; cluster?: string; everyMs?: number }): Promise<{ stop(): Promise<Latencies> }> {
  const subject = subjects(opts.cluster ?? 'default').gcs('list_nodes');
  const data = Buffer.from(encode('list_nodes', {})).toString('base64');
  const child = spawn(process.execPath, ['--input-type=module', '-e', PROBE, opts.address, subject, data, String(opts.everyMs ?? 5)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  let onResult!: (rtts: number[]) => void;
  const result = new Promise<number[]>((resolve) => (onResult = resolve));
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the latency probe exited (${code})`)));
    lines.on('line', (line) => {
      if (line === 'PROBING') resolve();
      else if (line.startsWith('RESULT ')) onResult(JSON.parse(line.slice(7)) as number[]);
    });
  });
  return {
    async stop() {
      child.stdin!.end('stop\n');
      const rtts = (await result).sort((a, b) => a - b);
      const at = (q: number) => rtts[Math.min(rtts.length - 1, Math.floor(q * rtts.length))] ?? 0;
      return { count: rtts.length, worst: rtts.at(-1) ?? 0, p99: at(0.99), median: at(0.5) };
    },
  };
}
