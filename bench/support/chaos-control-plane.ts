/**
 * The chaos run's control-plane faults (issue 13), after its raylet kills and freezes:
 *
 *   gcs   a standby GCS is started, then the leading GCS is SIGKILLed: the standby takes the lease,
 *         recovers the tables and what the raylets run, and serves.
 *         recovered = SIGKILL → a GCS answers and every actor is ALIVE.
 *   nats  the nats-server is SIGKILLed and started again on the same port and store after 1 s.
 *         recovered = SIGKILL → every called actor answering again.
 *
 * Throughout, one sequential caller per actor (up to CALLERS) records every answer: which
 * incarnation and process gave it, when — answerOverlaps (chaos-invariants.ts) then checks that no
 * two incarnations answered at the same instant. Checked after each fault: no actor restarted (its
 * numRestarts is what it was: the GCS kept every actor where it ran), and no node declared dead.
 */
import type { ActorHandle, ActorInfo, ClusterEvent, LocalCluster } from '../../runtime/index.ts';
import type { ChaosActor } from './chaos-actors.ts';
import { answerOverlaps, type AnswerRecord, type Violation } from './chaos-invariants.ts';

export type ControlPlaneFault = 'gcs' | 'nats';

export interface ControlPlaneRecord {
  readonly fault: ControlPlaneFault;
  readonly probed: number;
  readonly answers: number;
  /** Calls that failed (typed) during the fault: callers retry them. */
  readonly failedCalls: number;
  readonly recoveredMs: number;
}

const CALLERS = 100;

export async function controlPlaneFault(
  fault: ControlPlaneFault,
  local: LocalCluster,
  handles: ReadonlyMap<string, ActorHandle<ChaosActor>>,
  settleMs: number,
): Promise<{ record: ControlPlaneRecord; violations: Violation[] }> {
  if (!local.startGcs || !local.killLeaderGcs || !local.restartNats) throw new Error('control-plane faults need the nats transport');
  const before = new Map((await local.cluster.actors()).map((a) => [a.actorId, a]));
  const probed = [...handles.keys()].filter((id) => before.get(id)?.state === 'ALIVE').slice(0, CALLERS);
  const records: AnswerRecord[] = [];
  const deaths: ClusterEvent[] = [];
  const watch = local.cluster.events$.subscribe((e) => {
    if (e.type === 'node_dead') deaths.push(e);
  });
  let failedCalls = 0;
  let running = true;
  let faultAt = Number.POSITIVE_INFINITY;
  const lastAnswer = new Map<string, number>();
  const callers = probed.map(async (actorId) => {
    const h = handles.get(actorId)!;
    while (running) {
      const sentAt = performance.now();
      const a = await h.call('answer').catch(() => undefined);
      const answeredAt = performance.now();
      if (!a) {
        failedCalls++;
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      records.push({ actorId, incarnation: a.incarnation, pid: a.pid, sentAt, answeredAt });
      lastAnswer.set(actorId, sentAt);
    }
  });
  const until = async (what: string, pass: () => boolean | Promise<boolean>): Promise<void> => {
    const giveUp = performance.now() + settleMs;
    while (!(await pass())) {
      if (performance.now() > giveUp) throw new Error(`${fault} fault: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  try {
    await until('an answer from every called actor', () => probed.every((id) => lastAnswer.has(id)));
    if (fault === 'gcs') await local.startGcs();
    const t0 = performance.now();
    faultAt = t0;
    if (fault === 'gcs') await local.killLeaderGcs();
    else await local.restartNats({ downMs: 1000 });
    let after: ActorInfo[] = [];
    await until('a GCS serving with every actor ALIVE', async () => {
      after = await local.cluster.actors().catch(() => []);
      return after.length > 0 && after.every((a) => a.state === 'ALIVE' || !before.has(a.actorId) || before.get(a.actorId)!.state !== 'ALIVE');
    });
    await until('every called actor answering after the fault', () => probed.every((id) => (lastAnswer.get(id) ?? 0) > faultAt));
    const recoveredMs = performance.now() - t0;
    running = false;
    await Promise.all(callers);
    const violations: Violation[] = answerOverlaps(records, { after: Number.POSITIVE_INFINITY, incarnations: new Set() });
    for (const a of after) {
      const was = before.get(a.actorId);
      if (was && a.numRestarts !== was.numRestarts) violations.push({ kind: 'restarted', id: a.actorId, detail: `${fault} fault: numRestarts ${was.numRestarts} → ${a.numRestarts}` });
    }
    for (const e of deaths) violations.push({ kind: 'node_died', id: e.type === 'node_dead' ? e.node.nodeId : '?', detail: `${fault} fault: a node was declared dead` });
    return { record: { fault, probed: probed.length, answers: records.length, failedCalls, recoveredMs }, violations };
  } finally {
    running = false;
    watch.unsubscribe();
  }
}
