/**
 * The tables and rows of bench:gcs's control-plane fault sections (gcs-persist.ts,
 * gcs-recovery.ts, gcs-takeover.ts): one table per section, round by round, then one row per figure
 * with its reference beside it (persistence off; the grace window; the lease ttl) and the target.
 */
import type { CreationRound } from './gcs-persist.ts';
import { median } from './gcs-persist.ts';
import type { RecoveryResult } from './gcs-recovery.ts';
import type { TakeoverRound } from './gcs-takeover.ts';
import { formatNumber, formatTable, type Goal, type Row } from './report.ts';

export interface Sink {
  readonly rows: Row[];
  readonly out: (line?: string) => void;
  /** A target row and its verdict line (bench/gcs.ts). */
  readonly target: (row: Omit<Row, 'target' | 'met'>, value: number, goal: Goal, label: string, unit: string) => string;
}

export const TARGET_PERSIST_RATIO = 0.75;
export const TARGET_AFTER_GRACE_MS = 3_000;
export const TARGET_TAKEOVER_MS = 5_000;

const ms = (n: number): string => formatNumber(n);
const count = (n: number): string => n.toLocaleString('en-US');
const worst = (xs: readonly number[]): number => Math.max(...xs);

export function reportPersist(rounds: readonly CreationRound[], s: Sink): void {
  const n = rounds[0]?.actors ?? 0;
  s.out(`\n3. Actor creation with the GCS's tables in JetStream KV (--persist on) and in memory (--persist off): ${count(n)} actors, 256 in flight, rounds alternating`);
  s.out(formatTable(['round', 'persist', 'ALIVE', 'seconds', 'actors/s', 'load average'], rounds.map((r, i) => [
    String(i + 1), r.persist, `${count(r.alive)}/${count(r.actors)}`, formatNumber(r.ms / 1000), formatNumber(r.perSecond), r.load,
  ])));
  const on = median(rounds.filter((r) => r.persist === 'on').map((r) => r.perSecond));
  const off = median(rounds.filter((r) => r.persist === 'off').map((r) => r.perSecond));
  s.out(`median: persist on ${formatNumber(on)}/s, off ${formatNumber(off)}/s; on ÷ off = ${formatNumber(on / off)} (persistence costs ${formatNumber((1 - on / off) * 100)}% of the rate)`);
  const name = (x: string): string => `gcs faults: ${x}`;
  for (const [i, r] of rounds.entries()) s.rows.push({ name: name(`creation round ${i + 1}, persist ${r.persist} (actors/s)`), value: r.perSecond, unit: 'actors/s' });
  s.rows.push({ name: name(`creation, persist off, median of ${rounds.length / 2} (actors/s)`), value: off, unit: 'actors/s' });
  s.rows.push({ name: name(`creation, persist on, median of ${rounds.length / 2} (actors/s)`), value: on, unit: 'actors/s', reference: off, ratio: on / off });
  s.target({ name: name('creation rate, persist on ÷ persist off (medians)'), value: on / off, unit: 'ratio', reference: 1 }, TARGET_PERSIST_RATIO, 'atLeast', 'creation rate with persistence on ÷ off', '');
  const failed = rounds.reduce((sum, r) => sum + (r.actors - r.alive), 0);
  if (failed > 0) s.out(`WARNING: ${failed} actors did not become ALIVE in the creation rounds`);
}

export function reportRecovery(r: RecoveryResult, s: Sink): void {
  s.out(`\n4. GCS recovery: ${count(r.actors)} actors ALIVE on 2 raylets, the GCS SIGKILLed and a new one started at once (grace window ${count(r.graceMs)} ms)`);
  s.out('times from spawning the new GCS (ms): its READY line (standby: the killed GCS\'s lease had not lapsed), lease held, tables loaded from KV, last raylet registering again,');
  s.out('grace window over, serving (a), every actor listed ALIVE again; "after grace" (b) is the GCS\'s own figure, grace window over → serving');
  s.out(formatTable(['round', 'READY line', 'lease', 'tables', 'raylets back', 'grace over', 'serving (a)', 'after grace (b)', 'all ALIVE', 'grace ended', 'kept', 'load average'], r.rounds.map((x, i) => [
    String(i + 1), `${ms(x.toReady)}${x.readyStandby ? ' standby' : ''}`, ms(x.leaseHeld), ms(x.tablesLoaded), ms(x.lastRaylet), ms(x.graceOver), ms(x.toServing), ms(x.afterGrace), ms(x.toAllAlive),
    x.graceEnded.startsWith('early') ? 'early, all back' : 'window ran out', `${count(x.kept)}/${count(x.actors)}`, x.load,
  ])));
  const name = (x: string): string => `gcs faults: recovery with ${count(r.actors)} actors: ${x}`;
  for (const [i, x] of r.rounds.entries()) {
    s.rows.push({ name: name(`round ${i + 1}, new GCS process start to its READY line${x.readyStandby ? ' (as a standby)' : ''} (ms)`), value: x.toReady, unit: 'ms' });
    s.rows.push({ name: name(`round ${i + 1}, new GCS process start to serving (ms)`), value: x.toServing, unit: 'ms', reference: r.graceMs, ratio: x.toServing / r.graceMs });
    s.rows.push({ name: name(`round ${i + 1}, new GCS process start to every actor ALIVE again (ms)`), value: x.toAllAlive, unit: 'ms' });
    s.rows.push({ name: name(`round ${i + 1}, grace window over to serving (ms)`), value: x.afterGrace, unit: 'ms', reference: r.graceMs, ratio: x.afterGrace / r.graceMs });
    s.rows.push({ name: name(`round ${i + 1}, tables loaded from JetStream KV, from process start (ms)`), value: x.tablesLoaded, unit: 'ms' });
    s.rows.push({ name: name(`round ${i + 1}, last raylet registering again, from process start (ms)`), value: x.lastRaylet, unit: 'ms' });
  }
  const toServing = worst(r.rounds.map((x) => x.toServing));
  const afterGrace = worst(r.rounds.map((x) => x.afterGrace));
  s.rows.push({ name: name(`new GCS process start to serving, worst of ${r.rounds.length} (ms)`), value: toServing, unit: 'ms', reference: r.graceMs, ratio: toServing / r.graceMs });
  s.target({ name: name(`grace window over to serving, worst of ${r.rounds.length} (ms)`), value: afterGrace, unit: 'ms', reference: r.graceMs, ratio: afterGrace / r.graceMs },
    TARGET_AFTER_GRACE_MS, 'atMost', `recovery of ${count(r.actors)} actors after the grace window`, ' ms');
  const keptAll = r.rounds.every((x) => x.kept === x.actors);
  s.rows.push({ name: name('rounds where every actor stayed ALIVE on its node with numRestarts 0'), value: r.rounds.filter((x) => x.kept === x.actors).length, unit: 'rounds', reference: r.rounds.length });
  const fewest = Math.min(...r.rounds.map((x) => x.kept));
  s.target({ name: name(`actors ALIVE on their node with numRestarts 0 after recovery, fewest of ${r.rounds.length} round(s)`), value: fewest, unit: 'actors', reference: r.actors },
    r.actors, 'atLeast', `actors kept (ALIVE, same node, numRestarts 0) after recovery of ${count(r.actors)}`, ' actors');
  if (!keptAll) {
    s.out(`WARNING: not every actor was kept: ${r.rounds.map((x) => `${count(x.kept)}/${count(x.actors)}`).join(', ')}`);
    for (const [i, x] of r.rounds.entries()) if (x.lost) s.out(`  round ${i + 1}, not kept: ${x.lost}`);
  }
}

export function reportTakeover(rounds: readonly TakeoverRound[], leaseMs: number, s: Sink): void {
  s.out(`\n5. Standby takeover: leader SIGKILLed (then stopped with SIGTERM, then, last, frozen with SIGSTOP), a hot standby takes the lease (ttl ${count(leaseMs)} ms) and serves; ${count(rounds[0]?.actors ?? 0)} actors on 2 raylets`);
  s.out('times from the signal (ms): lease held, serving (its "serving: recovered" line), first nodes() answer a driver got (asked right after), every actor ALIVE again; "after grace" is the GCS\'s own figure');
  s.out(formatTable(['round', 'fault', 'epoch', 'lease held', 'serving', 'nodes() answered', 'all ALIVE', 'after grace', 'kept', 'load average'], rounds.map((x, i) => [
    String(i + 1), x.fault === 'kill' ? 'SIGKILL' : x.fault === 'stop' ? 'SIGTERM' : 'SIGSTOP', String(x.epoch), ms(x.leaseHeld), ms(x.serving), ms(x.firstAnswer), ms(x.allAlive), ms(x.afterGrace), `${count(x.kept)}/${count(x.actors)}`, x.load,
  ])));
  const name = (x: string): string => `gcs faults: standby takeover: ${x}`;
  for (const [i, x] of rounds.entries()) {
    s.rows.push({ name: name(`round ${i + 1}, ${x.fault} to lease held (ms)`), value: x.leaseHeld, unit: 'ms', reference: leaseMs, ratio: x.leaseHeld / leaseMs });
    s.rows.push({ name: name(`round ${i + 1}, ${x.fault} to serving (ms)`), value: x.serving, unit: 'ms', reference: leaseMs, ratio: x.serving / leaseMs });
    s.rows.push({ name: name(`round ${i + 1}, ${x.fault} to a driver's first nodes() answer (ms)`), value: x.firstAnswer, unit: 'ms' });
  }
  const frozen = rounds.find((x) => x.fault === 'freeze');
  if (frozen) s.out(`leader frozen: the driver's nodes() asked right after the freeze was answered ${ms(frozen.firstAnswer)} ms later, ${ms(frozen.firstAnswer - frozen.serving)} ms after the standby served (its own attempt would have run out 10,000 ms after it was sent)`);
  const w = worst(rounds.filter((x) => x.fault === 'kill').map((x) => x.serving));
  s.target({ name: name(`kill to serving, worst of ${rounds.filter((x) => x.fault === 'kill').length} (ms)`), value: w, unit: 'ms', reference: leaseMs, ratio: w / leaseMs }, TARGET_TAKEOVER_MS, 'atMost', 'standby takeover, kill to serving', ' ms');
  s.rows.push({ name: name('rounds where every actor stayed ALIVE on its node with numRestarts 0'), value: rounds.filter((x) => x.kept === x.actors).length, unit: 'rounds', reference: rounds.length });
  if (!rounds.every((x) => x.kept === x.actors)) s.out(`WARNING: not every actor was kept: ${rounds.map((x) => `${x.kept}/${x.actors}`).join(', ')}`);
}
