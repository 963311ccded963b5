/**
 * bench:gcs section "recovery": a GCS with 10,000 actors alive killed with SIGKILL and started
 * again. A nats-server with JetStream, a GCS with `--persist on` and the default grace window
 * (3,000 ms), two raylets of 100 CPUs, 10,000 no-op actors of numCpus 0.01 (5,000 per raylet,
 * created 256 in flight). Then, per round: SIGKILL to the GCS, a new GCS process started at once,
 * and timed —
 *
 *   (a) from spawning the new process to serving: its READY line, or — when that line says
 *       standby, because the killed GCS's leader lease has not lapsed yet — its serving line;
 *   (b) from the end of the grace window to serving, as the GCS itself measures it: its line
 *       `serving: recovered in X ms after the grace window ended (…)` (runtime/gcs/service.ts). The
 *       window ends early once every raylet the table held as live registered again.
 *
 * and, from the arrival times of the processes' log lines here, where (a) went: lease held, tables
 * loaded from KV, each raylet registering again, grace window over (serving line minus X), READY.
 * After each round every actor must be ALIVE on the node it was on, numRestarts 0: polled, since a
 * kept actor is SCHEDULED again until its raylet answers the create the new GCS sends it (the time
 * until all are is reported too).
 */
import { performance } from 'node:perf_hooks';
import type { ActorInfo, Cluster } from '../../runtime/index.ts';
import { createActors, startCreationCluster } from './gcs-persist.ts';
import { withFaultCluster, type SectionContext } from './fault-cluster.ts';

export interface RecoveryRound {
  /** Spawn of the new GCS → its READY line (ms), and whether that line said standby (the dead GCS's lease had not lapsed yet). */
  readonly toReady: number;
  readonly readyStandby: boolean;
  /** Spawn → its serving line (ms): what (a) is when READY said standby. */
  readonly toServing: number;
  /** Spawn → every actor listed ALIVE on its node, numRestarts 0, again (ms; polled every second). */
  readonly toAllAlive: number;
  /** The GCS's own figure: end of the grace window → serving (ms). */
  readonly afterGrace: number;
  /** Why the grace window ended, as the GCS said. */
  readonly graceEnded: string;
  /** Spawn → line arrivals (ms): lease held, tables loaded, last raylet registering again, grace over. */
  readonly leaseHeld: number;
  readonly tablesLoaded: number;
  readonly lastRaylet: number;
  readonly graceOver: number;
  /** The GCS's own `recovered: …` line, and the actors not kept, tallied (notKept). */
  readonly recovered: string;
  readonly lost: string;
  /** Actors ALIVE on their node with numRestarts 0 afterwards, of `actors`. */
  readonly kept: number;
  readonly actors: number;
  readonly load: string;
}

export interface RecoveryResult {
  readonly actors: number;
  readonly createMs: number;
  readonly graceMs: number;
  readonly rounds: readonly RecoveryRound[];
}

export const GRACE_MS = 3_000;
const GCS_ARGS = ['--persist', 'on'];
const ALIVE_WAIT_MS = 60_000;
/** Listing 10,000 actors costs the GCS ~100 ms: polled no more often than this, so the check does not load the GCS it checks. */
const POLL_MS = 1_000;

/** One round when profiling: only a GCS stopped gracefully writes its profile, and later rounds SIGKILL it. */
export function recoveryConfig(quick: boolean, profiling = false): { actors: number; rounds: number } {
  return { actors: quick ? 1_000 : 10_000, rounds: quick || profiling ? 1 : 3 };
}

export const keptOn = (before: Map<string, ActorInfo>, after: readonly ActorInfo[]): number =>
  after.filter((a) => a.state === 'ALIVE' && a.numRestarts === 0 && a.nodeId !== undefined && a.nodeId === before.get(a.actorId)?.nodeId).length;

/**
 * Lists the actors until every one of `before` is ALIVE on its node with numRestarts 0 again (a
 * kept actor is SCHEDULED until its raylet answers the create the GCS sends it again), or 60 s.
 */
export async function untilKept(client: Cluster, before: Map<string, ActorInfo>): Promise<ActorInfo[]> {
  const deadline = performance.now() + ALIVE_WAIT_MS;
  let after = await client.actors();
  while (keptOn(before, after) < before.size && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    after = await client.actors();
  }
  return after;
}

/** The actors not kept, tallied by state, restarts and whether they stayed on their node: "ALIVE restarts=1 moved: 12". */
export function notKept(before: Map<string, ActorInfo>, after: readonly ActorInfo[]): string {
  const tally = new Map<string, number>();
  const seen = new Set<string>();
  for (const a of after) {
    seen.add(a.actorId);
    const was = before.get(a.actorId);
    if (!was) continue;
    const same = a.nodeId === was.nodeId;
    if (a.state === 'ALIVE' && a.numRestarts === 0 && same) continue;
    const key = `${a.state} restarts=${a.numRestarts}${same ? '' : ' moved'}${a.deathCause ? ` (${a.deathCause.slice(0, 120)})` : ''}`;
    tally.set(key, (tally.get(key) ?? 0) + 1);
  }
  const missing = [...before.keys()].filter((id) => !seen.has(id)).length;
  if (missing > 0) tally.set('not listed', missing);
  return [...tally].map(([k, n]) => `${k}: ${n}`).join(', ');
}

export async function measureRecovery(ctx: SectionContext, load: () => string): Promise<RecoveryResult> {
  const cfg = recoveryConfig(ctx.quick, ctx.gcsFlags.length > 0);
  return withFaultCluster(ctx, 'recovery', async (fc) => {
    await startCreationCluster(fc, GCS_ARGS);
    ctx.progress(`recovery: creating ${cfg.actors.toLocaleString('en-US')} actors on ${fc.raylets.length} raylets; load average ${load()}`);
    const created = await createActors(ctx, fc, cfg.actors);
    if (created.alive !== cfg.actors) throw new Error(`only ${created.alive} of ${cfg.actors} actors became ALIVE (${created.failures} failed)`);
    const client = fc.client!;
    const before = new Map((await client.actors({ states: ['ALIVE'] })).map((a) => [a.actorId, a]));
    if (before.size !== cfg.actors) throw new Error(`${before.size} actors ALIVE before the kill, expected ${cfg.actors}`);
    ctx.progress(`recovery: ${before.size.toLocaleString('en-US')} ALIVE in ${(created.ms / 1000).toFixed(1)} s`);
    const rounds: RecoveryRound[] = [];
    for (let i = 0; i < cfg.rounds; i++) {
      const loadAt = load();
      const old = fc.gcses[fc.gcses.length - 1];
      await old.crash();
      const name = `gcs-${fc.gcses.length + 1}`;
      const t0 = performance.now();
      const next = await fc.gcs(GCS_ARGS, name);
      const toReady = performance.now() - t0;
      const serving = await fc.line(name, /serving: recovered in [\d.]+ ms after the grace window/, t0);
      const m = /recovered in ([\d.]+) ms after the grace window ended \((.*)\)/.exec(serving.line)!;
      const afterGrace = Number(m[1]);
      const since = (pattern: RegExp, source = name): Promise<number> => fc.line(source, pattern, t0).then((l) => l.at - t0);
      const leaseHeld = await since(/holding the leader lease/);
      const tablesLoaded = await since(/tables in JetStream KV/);
      const rayletLines = await Promise.all(fc.raylets.map((_, k) => since(/registering again/, `bench-${k + 1}`)));
      const recovered = (await fc.line(name, /recovered: /, t0)).line;
      const after = await untilKept(client, before);
      const toAllAlive = performance.now() - t0;
      const kept = keptOn(before, after);
      const lost = notKept(before, after);
      const r: RecoveryRound = {
        toReady, readyStandby: next.ready.standby === true, toServing: serving.at - t0, toAllAlive, afterGrace, graceEnded: m[2], leaseHeld, tablesLoaded, lastRaylet: Math.max(...rayletLines),
        graceOver: serving.at - t0 - afterGrace, recovered, lost, kept, actors: before.size, load: loadAt,
      };
      ctx.progress(`recovery round ${i + 1}: READY${next.ready.standby === true ? ' (standby)' : ''} after ${toReady.toFixed(0)} ms, serving after ${(serving.at - t0).toFixed(0)} ms, ${afterGrace.toFixed(0)} ms after the grace window (${m[2]}); all ALIVE again after ${toAllAlive.toFixed(0)} ms: ${kept} of ${before.size} kept${lost ? ` (not kept: ${lost})` : ''}; ${recovered}`);
      if (kept < before.size) ctx.progress(`not every actor kept; the last lines of the new GCS and the raylets:\n${[name, ...fc.raylets.map((_, k) => `bench-${k + 1}`)].map((src) => fc.tail(src, 12, t0)).join('\n')}`);
      rounds.push(r);
      if (kept < before.size) {
        ctx.progress('recovery: stopping after this round: the next would not recover 10,000 live actors');
        break;
      }
    }
    return { actors: cfg.actors, createMs: created.ms, graceMs: GRACE_MS, rounds };
  });
}
