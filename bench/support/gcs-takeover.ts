/**
 * bench:gcs section "takeover": a leader GCS and a hot standby (the default leader lease, 2,000 ms),
 * a nats-server with JetStream, two raylets of 100 CPUs and 200 no-op actors. Per round: SIGKILL to
 * the leader, and timed from the kill —
 *
 *   - the standby's `holding the leader lease with epoch N` line (it saw the lease lapse);
 *   - its `serving: recovered in …` line (runtime/gcs/service.ts): it serves — the READY-equivalent
 *     of a standby, which printed READY already when it started waiting;
 *   - the first answer a driver gets to `nodes()` asked right after the kill (the client rides
 *     through the outage, retrying; context for what a user sees).
 *
 * Then every actor must be ALIVE on its node with numRestarts 0, and a new standby is started for
 * the next round.
 *
 * Then one round with the leader stopped gracefully (SIGTERM, as a rolling upgrade does): it releases
 * the lease once it has stopped serving, and the standby takes it at its next read of the key rather
 * than after a whole lease (runtime/gcs/leader.ts, release()).
 *
 * Last, one round with the leader frozen (SIGSTOP) instead of killed: its subscriptions stay on the
 * server, so the driver's `nodes()` asked right after the freeze goes to it alone and gets no answer.
 * The same times are taken from the freeze; the first answer shows whether the driver asked again as
 * soon as the standby said it serves (its gcs_leader event) or only when its 10 s attempt ran out.
 * Then the old leader is resumed and must step down.
 */
import { performance } from 'node:perf_hooks';
import { createActors, startCreationCluster } from './gcs-persist.ts';
import { keptOn, untilKept } from './gcs-recovery.ts';
import { withFaultCluster, type SectionContext } from './fault-cluster.ts';

export interface TakeoverRound {
  /** How the leader was stopped: SIGKILL, SIGTERM (a graceful stop), or SIGSTOP (frozen, resumed after the round). */
  readonly fault: 'kill' | 'stop' | 'freeze';
  readonly epoch: number;
  /** Kill → lease held, → serving line, → first nodes() answer (ms). */
  readonly leaseHeld: number;
  readonly serving: number;
  readonly firstAnswer: number;
  /** Kill → every actor listed ALIVE on its node, numRestarts 0, again (polled every second). */
  readonly allAlive: number;
  /** The new leader's own figure: grace window over → serving (ms). */
  readonly afterGrace: number;
  readonly kept: number;
  readonly actors: number;
  readonly load: string;
}

export const LEASE_MS = 2_000;
const ACTORS = 200;

export async function measureTakeover(ctx: SectionContext, load: () => string): Promise<TakeoverRound[]> {
  const rounds = ctx.quick ? 1 : 3;
  return withFaultCluster(ctx, 'takeover', async (fc) => {
    const args = ['--persist', 'on'];
    await startCreationCluster(fc, args);
    await fc.gcs(args);
    if (fc.gcses[1].ready.standby !== true) throw new Error(`the second GCS did not start as a standby: ${JSON.stringify(fc.gcses[1].ready)}`);
    const created = await createActors(ctx, fc, ACTORS);
    if (created.alive !== ACTORS) throw new Error(`only ${created.alive} of ${ACTORS} actors became ALIVE`);
    const client = fc.client!;
    const before = new Map((await client.actors()).map((a) => [a.actorId, a]));
    const out: TakeoverRound[] = [];
    for (let i = 0; i <= rounds + 1; i++) {
      const fault = i < rounds ? 'kill' : i === rounds ? 'stop' : 'freeze';
      const epoch = i + 2;
      const leader = fc.gcses[fc.gcses.length - 2];
      const oldLeader = `gcs-${fc.gcses.length - 1}`;
      const standby = `gcs-${fc.gcses.length}`;
      const loadAt = load();
      const t0 = performance.now();
      if (fault === 'kill') await leader.crash();
      else if (fault === 'stop') process.kill(leader.pid, 'SIGTERM');
      else process.kill(leader.pid, 'SIGSTOP');
      const answered = client.nodes().then(() => performance.now() - t0);
      const held = await fc.line(standby, new RegExp(`holding the leader lease with epoch ${epoch}\\b`), t0);
      const serving = await fc.line(standby, /serving: recovered in [\d.]+ ms/, t0);
      const firstAnswer = await answered;
      const afterGrace = Number(/recovered in ([\d.]+) ms/.exec(serving.line)![1]);
      const after = await untilKept(client, before);
      const allAlive = performance.now() - t0;
      const kept = keptOn(before, after);
      const r = { fault, epoch, leaseHeld: held.at - t0, serving: serving.at - t0, firstAnswer, allAlive, afterGrace, kept, actors: before.size, load: loadAt } as const;
      ctx.progress(`takeover round ${i + 1}: lease held ${r.leaseHeld.toFixed(0)} ms after the ${fault}, serving ${r.serving.toFixed(0)} ms, first nodes() answer ${firstAnswer.toFixed(0)} ms; ${kept} of ${before.size} kept`);
      out.push(r);
      if (fault === 'freeze') {
        // resumed, it finds the lease taken and steps down
        const resumedAt = performance.now();
        process.kill(leader.pid, 'SIGCONT');
        await fc.line(oldLeader, /stepping down/, resumedAt);
      }
      if (fault === 'stop') await leader.exited;
      if (fault !== 'freeze') await fc.gcs(args);
    }
    return out;
  });
}
