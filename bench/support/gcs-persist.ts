/**
 * bench:gcs section "persist": what keeping the GCS's tables in JetStream KV costs actor creation.
 * Each round is a fresh set of processes — a nats-server with JetStream, one GCS with `--persist on`
 * or `--persist off` (the only difference), two raylets of 100 CPUs — and the creation of
 * bench:e2e: no-op actors of numCpus 0.01, 256 in flight, each slot `remote()` then `ready()`; a
 * warm-up batch first (created and killed, untimed), then the timed batch, whose figure is actors
 * ALIVE ÷ seconds from the first `remote()` to the last `ready()`. Rounds alternate off, on, off, on…
 * so load on the shared machine falls on both alike; the medians are compared.
 */
import { performance } from 'node:perf_hooks';
import type { ActorHandle } from '../../runtime/index.ts';
import type { Noop } from '../fixtures/actors.ts';
import { runPool } from './e2e-stats.ts';
import { withFaultCluster, type FaultCluster, type SectionContext } from './fault-cluster.ts';

export type Persist = 'on' | 'off';

export interface CreationRound {
  readonly persist: Persist;
  readonly actors: number;
  readonly alive: number;
  readonly failures: number;
  readonly ms: number;
  readonly perSecond: number;
  readonly load: string;
}

export interface PersistConfig {
  readonly actors: number;
  readonly warmup: number;
  /** Rounds per setting; the settings alternate. */
  readonly rounds: number;
}

export const IN_FLIGHT = 256;
const NUM_CPUS = 0.01;
const RAYLET_CPUS = 100;
const READY_TIMEOUT_MS = 60_000;

export function persistConfig(quick: boolean): PersistConfig {
  return quick ? { actors: 400, warmup: 100, rounds: 1 } : { actors: 2_000, warmup: 300, rounds: 3 };
}

/** Creates `n` actors, `IN_FLIGHT` at a time; resolves with the handles, the ALIVE count and the time. */
export async function createActors(ctx: SectionContext, fc: FaultCluster, n: number): Promise<{ handles: ActorHandle<Noop>[]; alive: number; failures: number; ms: number }> {
  const client = fc.client!;
  const handles: ActorHandle<Noop>[] = [];
  let alive = 0;
  let last = 0;
  const t0 = performance.now();
  const results = await runPool(n, IN_FLIGHT, async () => {
    const h = await client.actor(ctx.NoopActor).options({ numCpus: NUM_CPUS }).remote();
    handles.push(h);
    await h.ready({ timeoutMs: READY_TIMEOUT_MS });
    alive++;
    last = performance.now();
  });
  const failures = results.filter((r) => r && typeof r === 'object' && 'error' in r).length;
  return { handles, alive, failures, ms: last - t0 };
}

export async function startCreationCluster(fc: FaultCluster, gcsArgs: readonly string[], raylets = 2): Promise<void> {
  await fc.gcs(gcsArgs);
  for (let i = 0; i < raylets; i++) await fc.raylet(`bench-${i + 1}`, RAYLET_CPUS);
  await fc.connect();
}

async function round(ctx: SectionContext, persist: Persist, cfg: PersistConfig, load: () => string): Promise<CreationRound> {
  return withFaultCluster(ctx, `persist-${persist}`, async (fc) => {
    await startCreationCluster(fc, ['--persist', persist]);
    const warm = await createActors(ctx, fc, cfg.warmup);
    await runPool(warm.handles.length, IN_FLIGHT, (i) => warm.handles[i].kill());
    const loadAt = load();
    const r = await createActors(ctx, fc, cfg.actors);
    ctx.progress(`persist ${persist}: ${r.alive} of ${cfg.actors} ALIVE in ${(r.ms / 1000).toFixed(2)} s (${Math.round(r.alive / (r.ms / 1000))}/s); load average ${loadAt}`);
    return { persist, actors: cfg.actors, alive: r.alive, failures: r.failures, ms: r.ms, perSecond: r.alive / (r.ms / 1000), load: loadAt };
  });
}

/** Alternating rounds, off first. */
export async function measurePersist(ctx: SectionContext, load: () => string): Promise<CreationRound[]> {
  const cfg = persistConfig(ctx.quick);
  const rounds: CreationRound[] = [];
  for (let i = 0; i < cfg.rounds; i++) {
    for (const persist of ['off', 'on'] as const) rounds.push(await round(ctx, persist, cfg, load));
  }
  return rounds;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}
