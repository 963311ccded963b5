/**
 * One chaos run (bench/chaos.ts, and a small one in spec/integration/failover-chaos.spec.ts): a
 * local cluster of raylet processes on NATS, actors with a mix of hard affinity, anti-affinity,
 * label selectors and tolerations (maxRestarts -1), and a random raylet SIGKILLed every interval,
 * a replacement with the same labels and taints started each time. Then the invariants of
 * chaos-invariants.ts are checked, and each kill's times are reported:
 *
 *   detected   SIGKILL → the GCS's node_dead
 *   recovered  SIGKILL → every actor ALIVE again (counted from actor_state events, confirmed with
 *              actors()); when the next kill comes first, the time runs on until that moment
 *
 * Then `freezes` times the fault "raylet frozen (SIGSTOP) then resumed" (issue 13): the raylet
 * running the most actors is SIGSTOPped while one sequential caller per actor there (up to
 * FREEZE_CALLERS) records every answer — which incarnation and process gave it, when; once the GCS
 * has declared the node dead and every one of those actors answered from a new incarnation, SIGCONT;
 * the raylet hears known:false, drops its actors and registers again; the callers go on until
 * each has had answers after that. Checked (answerOverlaps): no two incarnations answered at the
 * same instant, and nothing answered from the frozen node's incarnations after SIGCONT. Times:
 *
 *   detected   SIGSTOP → node_dead
 *   recovered  SIGSTOP → every probed actor answering again, from its new incarnation
 */
import { filter, type Subscription } from 'rxjs';
import { actorAffinity, affinity, antiAffinity, Exists, seededRng, type PlacementOptions, type Rng } from '../../lib/index.ts';
import { subjects } from '../../protocols/subjects.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { startLocalCluster, type ActorInfo, type LocalCluster, type NodeEvent, type NodeSpec } from '../../runtime/index.ts';
import { ChaosActorClass } from './chaos-actors.ts';
import { controlPlaneFault, type ControlPlaneFault, type ControlPlaneRecord } from './chaos-control-plane.ts';
import { answerOverlaps, checkInvariants, findIncarnations, type AnswerRecord, type ExpectedActor, type Violation } from './chaos-invariants.ts';
import type { ActorHandle } from '../../runtime/index.ts';
import type { ChaosActor } from './chaos-actors.ts';

export interface ChaosOptions {
  actors: number;
  kills: number;
  intervalMs: number;
  seed?: number;
  /** Times a raylet is frozen (SIGSTOP) then resumed, after the kills; default 0. */
  freezes?: number;
  /** Control-plane faults run after the freezes, in order (chaos-control-plane.ts); default none. */
  controlPlane?: readonly ControlPlaneFault[];
  /** Which raylet each kill takes: a random one (default), or the one running the most actors. */
  victim?: 'random' | 'busiest';
  /** Longest wait for every actor to be ALIVE (after creation, and after the last kill). */
  settleTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface KillRecord {
  readonly node: string;
  readonly actorsOnNode: number;
  readonly detectedMs: number;
  readonly recoveredMs: number;
}

export interface FreezeRecord {
  readonly node: string;
  readonly actorsOnNode: number;
  /** Actors called throughout, one sequential caller each. */
  readonly probed: number;
  readonly answers: number;
  readonly detectedMs: number;
  /** SIGSTOP → every called actor that could be placed without the frozen node answering from a new incarnation. */
  readonly recoveredMs: number;
  /**
   * Called actors no other node could take while the node was frozen (PENDING with the scheduler's
   * reason after node_dead — e.g. anti-affinity with actors on every other node); they answer again
   * once the node is back.
   */
  readonly pinned: number;
  /** SIGCONT → every called actor answering from a new incarnation (the pinned ones placed again); 0 without pinned ones. */
  readonly pinnedRecoveredMs: number;
}

export interface ChaosResult {
  readonly actors: number;
  readonly createMs: number;
  readonly kills: readonly KillRecord[];
  readonly freezes: readonly FreezeRecord[];
  readonly controlPlane: readonly ControlPlaneRecord[];
  readonly alive: number;
  readonly violations: readonly Violation[];
  readonly mix: Readonly<Record<string, number>>;
}

const ZONES = ['a', 'b', 'c', 'd'];
/** Node d is tainted: only actors that tolerate it (and select it) run there. */
const NODE_SPECS: NodeSpec[] = ZONES.map((zone) => ({
  name: `node-${zone}`,
  labels: { zone },
  resources: { CPU: 16, slots: 1000 },
  ...(zone === 'd' ? { taints: { dedicated: 'batch' } } : {}),
}));

type Kind = 'anchor' | 'follower' | 'anti' | 'selector' | 'tolerant';

// What every actor holds. 1,000 actors hold 30 CPUs of the 48 the untainted nodes have: past the
// hybrid policy's 50% threshold, so placements spread over every node instead of packing onto the first.
const HELD: PlacementOptions = { numCpus: 0.03, resources: { slots: 1 } };

/** The placement options of an actor: 30% anchors, 25% affine to an anchor, 15% anti-affine to one, 20% selectors, 10% tolerations. */
function optionsFor(rng: Rng, anchors: readonly string[]): { kind: Kind; options: PlacementOptions } {
  const held = HELD;
  const r = rng();
  if (r < 0.3 || anchors.length === 0) return { kind: 'anchor', options: held };
  const anchor = anchors[Math.floor(rng() * anchors.length)];
  if (r < 0.55) return { kind: 'follower', options: { ...held, schedulingStrategy: actorAffinity(affinity(anchor)) } };
  if (r < 0.7) return { kind: 'anti', options: { ...held, schedulingStrategy: actorAffinity(antiAffinity(anchor)) } };
  if (r < 0.9) {
    const selectors = [{ zone: 'in(a,b)' }, { zone: '!in(c)' }, { zone: 'in(b,c)' }];
    return { kind: 'selector', options: { ...held, labelSelector: selectors[Math.floor(rng() * selectors.length)] } };
  }
  return { kind: 'tolerant', options: { ...held, labelSelector: { zone: 'd' }, tolerations: { dedicated: Exists() } } };
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosResult> {
  const log = opts.log ?? (() => undefined);
  const rng = seededRng(opts.seed ?? 42);
  const settleMs = opts.settleTimeoutMs ?? 60_000;
  const local = await startLocalCluster({ transport: 'nats', nodes: NODE_SPECS });
  const bus = await connectNatsBus({ servers: local.address, name: 'orrery-chaos-check' });
  const states = new Map<string, ActorInfo>();
  let stateSub: Subscription | undefined;
  try {
    const { cluster } = local;
    stateSub = cluster.events$.subscribe((e) => {
      if (e.type === 'actor_state' && states.has(e.actor.actorId)) {
        const last = states.get(e.actor.actorId)!;
        if (e.actor.numRestarts >= last.numRestarts) states.set(e.actor.actorId, e.actor);
      }
    });
    // ---- create ----
    const expected: ExpectedActor[] = [];
    const handles = new Map<string, ActorHandle<ChaosActor>>();
    const anchors: string[] = [];
    const mix: Record<string, number> = {};
    const created = performance.now();
    // the first tenth are anchors, created before anything can refer to them
    const firstAnchors = Math.min(opts.actors, Math.max(3, Math.ceil(opts.actors / 10)));
    for (let i = 0; i < opts.actors; ) {
      const end = i === 0 ? firstAnchors : Math.min(i + 50, opts.actors);
      const batch = [];
      for (let k = i; k < end; k++) {
        const { kind, options } = k < firstAnchors ? { kind: 'anchor' as const, options: HELD } : optionsFor(rng, anchors);
        mix[kind] = (mix[kind] ?? 0) + 1;
        batch.push(
          cluster.actor(ChaosActorClass).options({ ...options, maxRestarts: -1, maxTaskRetries: -1 }).remote().then((h) => {
            handles.set(h.actorId, h);
            expected.push({ actorId: h.actorId, namespace: h.namespace, options });
            states.set(h.actorId, { actorId: h.actorId, namespace: h.namespace, className: 'ChaosActor', state: 'PENDING', numRestarts: 0, labels: {} });
            if (kind === 'anchor') anchors.push(h.actorId);
          }),
        );
      }
      await Promise.all(batch);
      i = end;
    }
    await allAlive(local, states, settleMs);
    const createMs = performance.now() - created;
    log(`created ${opts.actors} actors in ${(createMs / 1000).toFixed(1)} s: ${Object.entries(mix).map(([k, n]) => `${n} ${k}`).join(', ')}`);

    // ---- kill ----
    const kills: KillRecord[] = [];
    const specs = new Map((await cluster.nodes()).map((n) => [n.nodeId, NODE_SPECS.find((s) => s.name === n.name)!]));
    const names = new Map((await cluster.nodes()).map((n) => [n.nodeId, n.name]));
    const pendingRecoveries: Promise<void>[] = [];
    for (let k = 1; k <= opts.kills; k++) {
      const started = performance.now();
      const live = [...specs.keys()];
      const load = (id: string) => [...states.values()].filter((a) => a.nodeId === id).length;
      const victim = opts.victim === 'busiest' ? live.reduce((a, b) => (load(b) > load(a) ? b : a)) : live[Math.floor(rng() * live.length)];
      const spec = specs.get(victim)!;
      specs.delete(victim);
      const onNode = [...states.values()].filter((a) => a.nodeId === victim && a.state === 'ALIVE').length;
      const dead = nodeDead(local, victim);
      const t0 = performance.now();
      await local.killNode(victim);
      const replacement = await local.addNode({ ...spec, name: `${spec.name}-r${k}` });
      specs.set(replacement.nodeId, spec);
      names.set(replacement.nodeId, replacement.name);
      const victimName = names.get(victim) ?? victim;
      log(`kill ${k}: SIGKILL ${victimName} (${victim}, ${onNode} actors); replacement ${replacement.name} joined`);
      const record = { node: victimName, actorsOnNode: onNode, detectedMs: 0, recoveredMs: 0 };
      kills.push(record);
      pendingRecoveries.push(
        (async () => {
          await dead;
          record.detectedMs = performance.now() - t0;
          await allAlive(local, states, settleMs + opts.intervalMs * (opts.kills - k + 1));
          record.recoveredMs = performance.now() - t0;
          log(`kill ${k}: detected in ${(record.detectedMs / 1000).toFixed(2)} s, every actor ALIVE ${(record.recoveredMs / 1000).toFixed(2)} s after the kill`);
        })(),
      );
      if (k < opts.kills) await new Promise((r) => setTimeout(r, Math.max(0, opts.intervalMs - (performance.now() - started))));
    }
    await Promise.all(pendingRecoveries);

    // ---- freeze ----
    const freezes: FreezeRecord[] = [];
    const freezeViolations: Violation[] = [];
    for (let f = 1; f <= (opts.freezes ?? 0); f++) {
      const { record, violations } = await freezeOne(local, states, handles, names, settleMs);
      const pinned = record.pinned > 0 ? ` (${record.pinned} of them, which no other node could take, once the node was back: ${(record.pinnedRecoveredMs / 1000).toFixed(2)} s after the SIGCONT)` : '';
      log(`freeze ${f}: SIGSTOP ${record.node} (${record.actorsOnNode} actors, ${record.probed} called throughout): detected in ${(record.detectedMs / 1000).toFixed(2)} s, every called actor answering again ${(record.recoveredMs / 1000).toFixed(2)} s after the SIGSTOP${pinned}; ${record.answers} answers checked`);
      freezes.push(record);
      freezeViolations.push(...violations);
    }

    // ---- control plane ----
    const controlPlane: ControlPlaneRecord[] = [];
    for (const fault of opts.controlPlane ?? []) {
      await allAlive(local, states, settleMs);
      const { record, violations } = await controlPlaneFault(fault, local, handles, settleMs);
      log(`${fault === 'gcs' ? 'GCS SIGKILLed, a standby took over' : 'nats-server SIGKILLed, back after 1 s'}: every called actor answering again ${(record.recoveredMs / 1000).toFixed(2)} s after it; ${record.answers} answers checked, ${record.failedCalls} calls failed meanwhile`);
      controlPlane.push(record);
      freezeViolations.push(...violations);
    }

    // ---- check ----
    const [nodes, actors] = await Promise.all([cluster.nodes(), cluster.actors()]);
    const violations = [
      ...checkInvariants({ nodes, actors, expected }),
      ...(await findIncarnations(bus, subjects(cluster.name), actors.filter((a) => a.state === 'ALIVE'), { method: 'where', windowMs: 1500 })),
      ...freezeViolations,
    ];
    return { actors: opts.actors, createMs, kills, freezes, controlPlane, alive: actors.filter((a) => a.state === 'ALIVE').length, violations, mix };
  } finally {
    stateSub?.unsubscribe();
    await bus.close().catch(() => undefined);
    await local.stop();
  }
}

function nodeDead(local: LocalCluster, nodeId: string): Promise<NodeEvent> {
  return new Promise((resolve) => {
    const sub = local.cluster.events$.pipe(filter((e): e is NodeEvent => e.type === 'node_dead' && e.node.nodeId === nodeId)).subscribe((e) => {
      sub.unsubscribe();
      resolve(e);
    });
  });
}

/**
 * Resolves once every tracked actor is ALIVE: counted from the events, then confirmed with
 * actors() (an event can be missed; the GCS's table cannot).
 */
async function allAlive(local: LocalCluster, states: Map<string, ActorInfo>, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let lastConfirm = 0;
  for (;;) {
    const waiting = [...states.values()].filter((a) => a.state !== 'ALIVE').length;
    const now = performance.now();
    if (waiting === 0 || now - lastConfirm > 2000) {
      lastConfirm = now;
      const actors = await local.cluster.actors();
      for (const a of actors) if (states.has(a.actorId)) states.set(a.actorId, a);
      if (actors.filter((a) => states.has(a.actorId)).every((a) => a.state === 'ALIVE')) return;
    }
    if (now > deadline) {
      const stuck = [...states.values()].filter((a) => a.state !== 'ALIVE');
      throw new Error(`${stuck.length} actor(s) not ALIVE after ${timeoutMs} ms, e.g. ${stuck.slice(0, 3).map((a) => `${a.actorId} ${a.state} ${a.pendingReason ?? ''}`).join('; ')}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Actors called throughout a freeze, one sequential caller each. */
const FREEZE_CALLERS = 100;

/**
 * The fault "raylet frozen (SIGSTOP) then resumed" on the raylet running the most actors; returns
 * its times and what answerOverlaps found in the answers recorded meanwhile.
 */
async function freezeOne(
  local: LocalCluster,
  states: Map<string, ActorInfo>,
  handles: ReadonlyMap<string, ActorHandle<ChaosActor>>,
  names: ReadonlyMap<string, string>,
  settleMs: number,
): Promise<{ record: FreezeRecord; violations: Violation[] }> {
  await allAlive(local, states, settleMs);
  const load = new Map<string, number>();
  for (const a of states.values()) if (a.nodeId) load.set(a.nodeId, (load.get(a.nodeId) ?? 0) + 1);
  const victim = [...load.entries()].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  const pid = local.rayletPid?.(victim);
  if (pid === undefined) throw new Error(`no raylet pid for ${victim}: the freeze fault needs the nats transport`);
  const onNode = [...states.values()].filter((a) => a.nodeId === victim).map((a) => a.actorId);
  const probed = onNode.slice(0, FREEZE_CALLERS);
  const records: AnswerRecord[] = [];
  const oldIncarnations = new Set<string>();
  const fresh = new Map<string, number>(); // actorId → answers from an incarnation not on the victim
  const lastAnswer = new Map<string, { nodeId: string; incarnation: string; at: number }>();
  const lastError = new Map<string, { code: string; at: number }>();
  let sawDead = false;
  let resumedAt = Number.POSITIVE_INFINITY;
  let afterResume = 0;
  let running = true;
  const callers = probed.map(async (actorId) => {
    const h = handles.get(actorId)!;
    while (running) {
      const sentAt = performance.now();
      const a = await h.call('answer').catch((err: unknown) => void lastError.set(actorId, { code: String((err as { code?: unknown }).code ?? err), at: performance.now() }));
      const answeredAt = performance.now();
      if (!a) continue;
      lastAnswer.set(actorId, { nodeId: a.nodeId, incarnation: a.incarnation, at: answeredAt });
      records.push({ actorId, incarnation: a.incarnation, pid: a.pid, sentAt, answeredAt });
      if (a.nodeId === victim && resumedAt === Number.POSITIVE_INFINITY && !sawDead) oldIncarnations.add(a.incarnation);
      // a new incarnation: elsewhere, or on the node once it is back (actors only it could take)
      if (!oldIncarnations.has(a.incarnation)) fresh.set(actorId, (fresh.get(actorId) ?? 0) + 1);
      if (sentAt > resumedAt) afterResume++;
    }
  });
  /** The called actors without a fresh answer: what each last answered or failed with, and its state in the GCS's table. */
  const stuck = (): string => {
    const now = performance.now();
    const left = probed.filter((id) => (fresh.get(id) ?? 0) === 0);
    const ms = (t: number | undefined): string => (t === undefined ? '—' : `${Math.round(now - t)} ms ago`);
    return `${left.length} of ${probed.length} without one, e.g. ${left
      .slice(0, 5)
      .map((id) => {
        const a = lastAnswer.get(id);
        const e = lastError.get(id);
        const s = states.get(id);
        return `${id} (${s?.state ?? '?'} on ${s?.nodeId === victim ? 'the frozen node' : (s?.nodeId ?? '—')}${s?.pendingReason ? `: ${s.pendingReason}` : ''}; last answer from ${a === undefined ? '—' : a.nodeId === victim ? 'the frozen node' : a.nodeId} ${ms(a?.at)}; last error ${e?.code ?? '—'} ${ms(e?.at)})`;
      })
      .join('; ')}`;
  };
  const until = async (what: string, pass: () => boolean): Promise<void> => {
    const giveUp = performance.now() + settleMs;
    while (!pass()) {
      if (performance.now() > giveUp) throw new Error(`freeze: timed out waiting for ${what}${what.includes('new incarnation') ? `: ${stuck()}` : ''}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  try {
    await until('an answer from every called actor', () => probed.every((id) => records.some((r) => r.actorId === id)));
    const dead = nodeDead(local, victim);
    const t0 = performance.now();
    process.kill(pid, 'SIGSTOP');
    let detectedMs = 0;
    let recoveredMs = 0;
    const pinned = new Set<string>();
    try {
      await dead;
      sawDead = true;
      detectedMs = performance.now() - t0;
      // What each called actor's state was at node_dead: a PENDING state reported after it, with the
      // scheduler's reason, means no node left could take the actor (until the frozen one is back).
      const atDead = new Map(probed.map((id) => [id, states.get(id)]));
      const waitsForNode = (id: string): boolean => {
        const s = states.get(id);
        return s !== atDead.get(id) && s?.state === 'PENDING' && /^0\/\d+ nodes are available/.test(s.pendingReason ?? '');
      };
      await until('every called actor answering from a new incarnation', () => probed.every((id) => (fresh.get(id) ?? 0) > 0 || waitsForNode(id)));
      recoveredMs = performance.now() - t0;
      for (const id of probed) if ((fresh.get(id) ?? 0) === 0) pinned.add(id);
    } finally {
      const back = nodeAdded(local, victim);
      resumedAt = performance.now();
      process.kill(pid, 'SIGCONT');
      await back;
    }
    await until('every called actor answering from a new incarnation', () => probed.every((id) => (fresh.get(id) ?? 0) > 0));
    const pinnedRecoveredMs = pinned.size > 0 ? performance.now() - resumedAt : 0;
    await allAlive(local, states, settleMs);
    await until('answers after the raylet registered again', () => afterResume >= probed.length * 5);
    running = false;
    await Promise.all(callers);
    return {
      record: { node: names.get(victim) ?? victim, actorsOnNode: onNode.length, probed: probed.length, answers: records.length, detectedMs, recoveredMs, pinned: pinned.size, pinnedRecoveredMs },
      violations: answerOverlaps(records, { after: resumedAt, incarnations: oldIncarnations }),
    };
  } finally {
    running = false;
  }
}

function nodeAdded(local: LocalCluster, nodeId: string): Promise<NodeEvent> {
  return new Promise((resolve) => {
    const sub = local.cluster.events$.pipe(filter((e): e is NodeEvent => e.type === 'node_added' && e.node.nodeId === nodeId)).subscribe((e) => {
      sub.unsubscribe();
      resolve(e);
    });
  });
}
