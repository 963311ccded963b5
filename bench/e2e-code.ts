/**
 * Section 5 of `npm run bench:e2e` (bench/e2e.ts runs it last; `--code` runs it alone): what code
 * shipping costs the first call of an actor (docs/code-shipping.md). A one-node cluster of its own
 * (nats-server with JetStream, a GCS and a raylet process, in the bench's mode), and in each round a
 * module the node has never seen — an ES module with a relative import, its text unique to the
 * round so its bundle hash is new: the driver bundles and uploads it, the worker host fetches,
 * verifies and writes it into its cache, imports it, and the actor answers. Then a second actor of
 * the same module on the same node: the code cached there, the rest of the path the same. Both are
 * timed from remote() to the first call's answer; the difference is what shipping adds.
 *
 * A first round warms the node (its worker host started, the object store created) and is not
 * counted. No target: the figures are recorded in docs/benchmarks.md ("Code shipping").
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import type { Row } from './support/report.ts';
import { formatNumber, formatTable } from './support/report.ts';
import { mean, percentile } from './support/e2e-stats.ts';

export interface CodeShippingOptions {
  /** The runtime the bench's mode loads (dist/index.js or index.ts). */
  readonly pkg: typeof import('../index.ts');
  /** The mode's node flags (plain node: none). */
  readonly nodeFlags: readonly string[];
  readonly quick: boolean;
  readonly out: (line?: string) => void;
  readonly progress?: (line: string) => void;
}

const READY_TIMEOUT_MS = 60_000;
/** Bytes of the imported helper: a module of a realistic size rather than a one-liner. */
const HELPER_BYTES = 20_000;

interface Round {
  readonly coldMs: number;
  readonly cachedMs: number;
}

/** Runs the section and prints its table; returns its JSON rows. */
export async function measureCodeShipping(opts: CodeShippingOptions): Promise<Row[]> {
  const rounds = opts.quick ? 3 : 10;
  const work = mkdtempSync(join(tmpdir(), 'orrery-bench-code-'));
  const local = await opts.pkg.startLocalCluster({ transport: 'nats', nodes: [{ name: 'code', resources: { CPU: 8 } }], nodeFlags: [...opts.nodeFlags] });
  const measured: Round[] = [];
  let bundleBytes = 0;
  try {
    for (let r = 0; r <= rounds; r++) {
      const { url, bytes } = writeModule(work, r);
      bundleBytes = bytes;
      const { Probe } = (await import(url)) as { Probe: new () => { ping(): string } };
      const Cls = opts.pkg.defineActor(url, Probe);
      const firstCall = async (): Promise<{ ms: number; kill: () => Promise<void> }> => {
        const t0 = performance.now();
        const h = await local.cluster.actor(Cls).options({ numCpus: 1 }).remote();
        const info = await h.ready({ timeoutMs: READY_TIMEOUT_MS });
        if (info.state !== 'ALIVE') throw new Error(`code-shipping probe not ALIVE: ${info.state} ${info.deathCause ?? ''}`);
        if ((await h.call('ping')) !== `pong ${r}`) throw new Error('code-shipping probe answered wrong');
        return { ms: performance.now() - t0, kill: () => h.kill() };
      };
      const cold = await firstCall();
      const cached = await firstCall();
      await Promise.all([cold.kill(), cached.kill()]);
      if (r > 0) measured.push({ coldMs: cold.ms, cachedMs: cached.ms });
      else opts.progress?.(`code shipping: warm-up round done (${formatNumber(cold.ms)} ms cold)`);
    }
  } finally {
    await local.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return report(measured, bundleBytes, opts.out);
}

/** Round `r`'s module: `probe.mjs` importing `./lib/helper.mjs`, both unique to the round. */
function writeModule(work: string, r: number): { url: string; bytes: number } {
  const dir = join(work, `round-${r}`);
  mkdirSync(join(dir, 'lib'), { recursive: true });
  const helper = `// round ${r}\nexport const table = ${JSON.stringify('h'.repeat(HELPER_BYTES))};\nexport const reply = () => 'pong ${r}';\n`;
  const probe = `import { reply } from './lib/helper.mjs';\nexport class Probe { ping() { return reply(); } }\n`;
  writeFileSync(join(dir, 'lib', 'helper.mjs'), helper);
  writeFileSync(join(dir, 'probe.mjs'), probe);
  return { url: pathToFileURL(join(dir, 'probe.mjs')).href, bytes: helper.length + probe.length };
}

function report(rounds: readonly Round[], bundleBytes: number, out: (line?: string) => void): Row[] {
  const cold = rounds.map((r) => r.coldMs);
  const cached = rounds.map((r) => r.cachedMs);
  const rows: Row[] = [
    { name: 'code shipping: remote() to first call, code not yet on the node (p50, ms)', value: percentile(cold, 50), unit: 'ms' },
    { name: 'code shipping: remote() to first call, code cached on the node (p50, ms)', value: percentile(cached, 50), unit: 'ms' },
    { name: 'code shipping: added by shipping (p50 cold − p50 cached, ms)', value: percentile(cold, 50) - percentile(cached, 50), unit: 'ms' },
  ];
  out(`\n5. Code shipping — ${rounds.length} rounds on a one-node cluster, each a new ${formatNumber(bundleBytes / 1000)} kB module (2 files) the node has not seen, then the same module again`);
  out(
    formatTable(
      ['remote() → first call answered', 'p50 (ms)', 'mean (ms)', 'max (ms)'],
      [
        ['code not yet on the node (bundle, upload, fetch, verify, import)', formatNumber(percentile(cold, 50)), formatNumber(mean(cold)), formatNumber(Math.max(...cold))],
        ['code cached on the node', formatNumber(percentile(cached, 50)), formatNumber(mean(cached)), formatNumber(Math.max(...cached))],
      ],
    ),
  );
  return rows;
}
