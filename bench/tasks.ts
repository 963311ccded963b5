/**
 * Tasks per second from one driver: no-op tasks, sequential (one at a time) and pipelined (64 in
 * flight), on real processes — a nats-server, a GCS process and two raylet processes of 8 CPUs,
 * each with its forked task hosts, started by startLocalCluster({ transport: 'nats' }) — beside raw
 * NATS request/reply measured in the same run against a plain process of its own (the mode's
 * tasks responder):
 *
 *   raw request/reply   driver → nats-server → responder → nats-server → driver
 *   raw, task's hops    driver → nats-server → relay → IPC → child → nats-server → driver
 *                       (a task's path: raylet, then its worker host, which answers the driver)
 *
 * All five are measured in alternating rounds, so they share the machine's load. Reference: Ray's
 * published single-client figures (1,046 tasks/s sync, 8,051/s async), printed for context.
 *
 *   npm run bench:tasks [-- --json] [-- --quick] [-- --dev]
 *
 * Two modes, as bench:e2e, bench:pg and bench:gcs (bench/support/bench-run.ts):
 * - default ("plain node"): the code users run — startLocalCluster from the compiled package
 *   (dist/index.js) with nodeFlags: [], so the GCS, raylets and worker hosts run dist/*.js on plain
 *   node; nats-server started by dist/runtime/local/nats-server.js; the driver's bus is
 *   dist/runtime/bus/nats-connect.js; the no-op task from bench/fixtures/tasks.mjs, which imports
 *   'orrery' by name (→ dist/); the responder and its relay child are
 *   bench/fixtures/tasks-responder.mjs on plain node. The script builds dist/ first. The driver
 *   (this file) stays under tsx, loading only dist/ code for the runtime.
 * - --dev: everything from source under tsx (--conditions=source --import tsx), as in development;
 *   the task from bench/support/tasks-fixtures.ts, the responder bench/support/tasks-responder.ts.
 * The header prints the mode, the commit measured and (default mode) the state of dist/; every JSON
 * row's name starts with the mode's tag.
 *
 * Targets (never lowered): sequential ≥ 0.6× raw request/reply sequential; pipelined ≥ 0.4× raw
 * request/reply pipelined. The same-hops reference is reported beside them without a target.
 */
import { randomBytes } from 'node:crypto';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import type { ChildProcess } from 'node:child_process';
import type { Bus } from '../runtime/bus/bus.ts';
import type { LocalCluster } from '../runtime/index.ts';
import type { NatsServerHandle } from '../runtime/local/nats-server.ts';
import { DEV_MODE, PLAIN_MODE, distState, sourceVersion, startResponder, stopChild, type Mode } from './support/bench-run.ts';
import { formatNumber, formatTable, parseBenchArgs, printJsonLast, targetRow, verdict, type Row } from './support/report.ts';

const DEV = process.argv.includes('--dev');
const args = parseBenchArgs(process.argv.slice(2).filter((a) => a !== '--dev'));
const MODE: Mode = DEV ? DEV_MODE : PLAIN_MODE;

const here = (path: string): string => new URL(path, import.meta.url).href;
// Loaded by URL so the mode decides which tree the driver's runtime code comes from; the types are
// the source's, which dist/ is compiled from.
const { startLocalCluster } = (await import(here(MODE.pkg))) as typeof import('../index.ts');
const { connectNatsBus } = (await import(here(MODE.bus))) as typeof import('../runtime/bus/nats-connect.ts');
const { startNatsServer } = (await import(here(MODE.natsServer))) as typeof import('../runtime/local/nats-server.ts');
const { Noop } = (await import(here(MODE.taskFixtures))) as typeof import('./support/tasks-fixtures.ts');

const SIZE = args.quick ? { sequential: 300, pipelined: 2_000, warmup: 300, rounds: 3 } : { sequential: 1_500, pipelined: 12_000, warmup: 1_500, rounds: 6 };
const PIPELINE = 64;
const PAYLOAD_BYTES = 100;
const TARGETS = { sequential: 0.6, pipelined: 0.4 };
const RAY = { sync: 1_046, async: 8_051 };
const NODES = [
  { name: 'bench-a', resources: { CPU: 8 } },
  { name: 'bench-b', resources: { CPU: 8 } },
];

const out = (line = ''): void => console.log(line);

type Kind = 'raw' | 'hops' | 'tasks';
type Pace = 'sequential' | 'pipelined';

/** Runs `count` operations, `concurrency` at a time; returns the seconds taken. */
async function timed(count: number, concurrency: number, op: () => Promise<unknown>): Promise<number> {
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      next++;
      await op();
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<Row[]> {
  let nats: NatsServerHandle | undefined;
  let local: LocalCluster | undefined;
  let responder: ChildProcess | undefined;
  let bus: Bus | undefined;
  out(`bench:tasks${args.quick ? ' (--quick: small counts, a smoke test, not for publishing)' : ''}: node ${process.version}, ${new Date().toISOString()}`);
  out(`mode: ${MODE.describe}`);
  out(`task: Noop from bench/${MODE.taskFixtures.replace(/^\.\//, '')}; raw references: bench/${MODE.tasksResponder.replace(/^\.\//, '')} with node flags [${MODE.nodeFlags.join(' ')}]`);
  out(`code: ${sourceVersion()}`);
  if (!DEV) out(`dist/: ${distState('bench:tasks')}`);
  out(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  try {
    nats = await startNatsServer();
    local = await startLocalCluster({ transport: 'nats', address: nats.url, nodes: NODES, nodeFlags: MODE.nodeFlags });
    const subject = `bench.tasks.${randomBytes(4).toString('hex')}`;
    responder = await startResponder(MODE, nats.url, subject, MODE.tasksResponder);
    bus = await connectNatsBus({ servers: nats.url, name: 'orrery-bench-driver' });
    const payload = new Uint8Array(PAYLOAD_BYTES).fill(7);
    const raw = bus;
    const cluster = local.cluster;
    const ops: Record<Kind, () => Promise<unknown>> = {
      raw: () => raw.request(`${subject}.plain`, payload, { timeoutMs: 10_000 }),
      hops: () => raw.request(`${subject}.hops`, payload, { timeoutMs: 10_000 }),
      tasks: () => cluster.task(Noop).remote(),
    };

    out(`cluster: ${NODES.length} raylet processes (${NODES.map((n) => `${n.name} CPU ${n.resources.CPU}`).join(', ')}), nats-server ${nats.url}`);
    out(`warm-up: ${SIZE.warmup} of each, sequential and pipelined`);
    for (const kind of ['raw', 'hops', 'tasks'] as const) {
      await timed(SIZE.warmup, 1, ops[kind]);
      await timed(SIZE.warmup, PIPELINE, ops[kind]);
    }
    const first = await cluster.task(Noop).remoteWithInfo();
    out(`a no-op task ran on ${first.nodeId} (route ${first.route.join(' → ')})`);

    const total: Record<Pace, Record<Kind, { ops: number; secs: number }>> = {
      sequential: { raw: { ops: 0, secs: 0 }, hops: { ops: 0, secs: 0 }, tasks: { ops: 0, secs: 0 } },
      pipelined: { raw: { ops: 0, secs: 0 }, hops: { ops: 0, secs: 0 }, tasks: { ops: 0, secs: 0 } },
    };
    for (let round = 1; round <= SIZE.rounds; round++) {
      for (const [pace, count, concurrency] of [['sequential', SIZE.sequential, 1], ['pipelined', SIZE.pipelined, PIPELINE]] as const) {
        for (const kind of ['raw', 'hops', 'tasks'] as const) {
          const secs = await timed(count, concurrency, ops[kind]);
          total[pace][kind].ops += count;
          total[pace][kind].secs += secs;
        }
      }
      const rate = (m: Pace, k: Kind) => formatNumber(total[m][k].ops / total[m][k].secs);
      out(`  round ${round}/${SIZE.rounds}: sequential raw ${rate('sequential', 'raw')}/s, hops ${rate('sequential', 'hops')}/s, tasks ${rate('sequential', 'tasks')}/s; pipelined raw ${rate('pipelined', 'raw')}/s, hops ${rate('pipelined', 'hops')}/s, tasks ${rate('pipelined', 'tasks')}/s (cumulative)`);
    }

    const rate = (m: Pace, k: Kind): number => total[m][k].ops / total[m][k].secs;
    const rows: Row[] = [];
    const table: string[][] = [];
    const verdicts: string[] = [];
    for (const pace of ['sequential', 'pipelined'] as const) {
      const tasks = rate(pace, 'tasks');
      const plain = rate(pace, 'raw');
      const hops = rate(pace, 'hops');
      rows.push({ name: `raw NATS request/reply ${pace}`, value: plain, unit: 'req/s' });
      rows.push({ name: `raw NATS, a task's hops, ${pace}`, value: hops, unit: 'req/s' });
      rows.push({ name: `no-op tasks ${pace}`, value: tasks, unit: 'tasks/s', reference: plain, ratio: tasks / plain });
      rows.push({ name: `no-op tasks ${pace} ÷ raw, a task's hops`, value: tasks / hops, unit: '×', reference: hops });
      const target = TARGETS[pace];
      rows.push(targetRow({ name: `no-op tasks ${pace} ÷ raw request/reply`, value: tasks / plain, unit: '×', reference: plain }, target, 'atLeast'));
      table.push([pace, formatNumber(tasks), formatNumber(plain), formatNumber(hops), `${(tasks / plain).toFixed(2)}×`, `${(tasks / hops).toFixed(2)}×`, `≥ ${target}×`, verdict(tasks / plain, target, 'atLeast')]);
      verdicts.push(`  ${pace}: ${(tasks / plain).toFixed(2)}× raw request/reply (target ≥ ${target}×) — ${verdict(tasks / plain, target, 'atLeast')}`);
    }
    out();
    out(formatTable(['mode', 'tasks/s', 'raw req/s', 'raw hops/s', 'vs raw', 'vs hops', 'target', 'verdict'], table));
    out();
    out(`Ray (published, single client, for context): ${formatNumber(RAY.sync)} tasks/s sync, ${formatNumber(RAY.async)} tasks/s async`);
    out(`sequential: ${SIZE.sequential} per round; pipelined: ${SIZE.pipelined} per round with ${PIPELINE} in flight; ${SIZE.rounds} rounds, alternating`);
    out(`machine: ${cpus()[0]?.model ?? '?'}, ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average at end ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    out(`targets (mode: ${MODE.tag}):`);
    for (const v of verdicts) out(v);
    return rows;
  } finally {
    await bus?.close().catch(() => undefined);
    await stopChild(responder);
    await local?.stop().catch(() => undefined);
    await nats?.stop().catch(() => undefined);
  }
}

const rows = await main();
printJsonLast(args, rows.map((r) => ({ ...r, name: `${MODE.tag}: ${r.name}` })));
process.exit(0);
