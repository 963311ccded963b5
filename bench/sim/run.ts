import { createHash } from 'node:crypto';
import { seededRng, randomInt, type Rng } from '../../lib/random.ts';
import { decode, encode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { decodeReply } from '../../protocols/reply.ts';
import { subjects as clusterSubjects } from '../../protocols/subjects.ts';
import { unknown } from '../../protocols/validate.ts';
import { connectMemoryBus, MemoryBroker } from '../../runtime/bus/memory.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { SimClock } from './clock.ts';
import { Farm, realNow } from './farm.ts';
import { actorPlan, nodeSpec, placementProblem, type ActorKind, type ActorPlan } from './workload.ts';

/**
 * One simulator run: the real GCS (GcsService: its machines, pending queue, label index, view
 * broadcast and event log) on the memory bus, N simulated raylets (farm.ts), a driver creating
 * actors, all under the SimClock, in phases:
 *
 *   join       N nodes register
 *   beats      5 simulated seconds of heartbeats only        → GCS cost per heartbeat
 *   label      one label set on one node                      → bytes of the delta that carries it
 *   create     M actors of the workload mix, placed           → GCS cost per creation, creations/s
 *   churn      10 simulated seconds: actors killed and dying, nodes crashing and joining, new actors
 *                                                            → view bytes per node per second, cost per delta
 *   pending    1,000 unplaceable actors of distinct shapes, one pass of the queue over them
 *   check      invariants: no over-commit, every hard constraint holds where actors run, the GCS's
 *              table agrees with what runs, every request answered, no actor stuck mid-creation
 *
 * "GCS time" is the main thread's real time in a phase less the time the simulated raylets and the
 * harness (driver, event observer) measured for themselves: the GCS's own handlers, its timers, and
 * the memory bus between them. The trace hash covers every event the GCS published, in order, with
 * its simulated timestamp: the same seed gives the same hash.
 */
export interface SimOptions {
  readonly nodes: number;
  readonly actors: number;
  readonly seed: number;
  /** Simulated seconds of churn; default 10. */
  readonly churnSeconds?: number;
  /** Unplaceable actors for the pending-queue pass; default 1,000. */
  readonly pendingActors?: number;
  readonly log?: (line: string) => void;
}

export interface SimResult {
  readonly nodes: number;
  readonly actors: number;
  readonly seed: number;
  readonly traceHash: string;
  readonly events: number;
  /** Real µs of GCS time per node registered. */
  readonly joinUs: number;
  /** Real µs of GCS time per heartbeat handled. */
  readonly heartbeatUs: number;
  /** Fraction of one core the GCS spends on heartbeats at the nodes' period. */
  readonly heartbeatCoreShare: number;
  /** Real µs of GCS time per actor created (registered, placed, ALIVE). */
  readonly creationUs: number;
  /** Actors created per real second. */
  readonly creationRate: number;
  /** Real µs of GCS time per view delta published (its flush). */
  readonly viewDeltaUs: number;
  /** Bytes on the view subject per simulated second in the churn phase: what each node receives. */
  readonly viewBytesPerNodePerSecond: number;
  /** Bytes of the view delta that carries one label change on one node. */
  readonly labelDeltaBytes: number;
  /** Heap per node / per actor, bytes (GCS plus the harness's own small records: an upper bound). */
  readonly bytesPerNode: number;
  readonly bytesPerActor: number;
  /** Real ms of GCS time per unplaceable actor registered: its first explanation judges every node. */
  readonly unplaceableMs: number;
  /** Real ms of one pending-queue pass over `pendingWaiting` actors. */
  readonly pendingPassMs: number;
  readonly pendingWaiting: number;
  /** Actors left PENDING at the end that could have been placed (not of the infeasible kind). */
  readonly leftPending: number;
  readonly violations: readonly string[];
  /** Real seconds the whole run took. */
  readonly wallSeconds: number;
}

const CLUSTER = 'sim';
/** GCS log lines a run with crashing nodes is expected to produce. */
const ROUTINE = [/^kill_actor \S+ on node \S+: NO_RESPONDERS/, /^node \S+ missed its heartbeats for \d+ ms: DEAD$/, /^actor \S+ restarts: /];
const NO_OPTIONS: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;
const anyValue = unknown();

export async function runSim(opts: SimOptions): Promise<SimResult> {
  const started = realNow();
  const log = opts.log ?? (() => {});
  const rng = seededRng(opts.seed);
  const clock = new SimClock();
  clock.install();
  try {
    return await simulate(opts, rng, clock, log, started);
  } finally {
    clock.uninstall();
  }
}

async function simulate(opts: SimOptions, rng: Rng, clock: SimClock, log: (line: string) => void, started: number): Promise<SimResult> {
  // loaded after the clock is installed, though nothing captures timers at load: kept close to use
  const { GcsService } = await import('../../runtime/gcs/service.ts');
  const broker = new MemoryBroker();
  const s = clusterSubjects(CLUSTER);
  const buses: Bus[] = [];
  const bus = (): Bus => {
    const b = connectMemoryBus(broker);
    buses.push(b);
    return b;
  };
  const violations: string[] = [];
  const harness = { busyMs: 0 };
  const timed = <T>(fn: () => T): T => {
    const t0 = realNow();
    try {
      return fn();
    } finally {
      harness.busyMs += realNow() - t0;
    }
  };

  // what the GCS logs that is not routine (a kill sent to a node that crashed is) counts as a finding
  const gcsLog: string[] = [];
  const gcs = new GcsService({
    bus: bus(), cluster: CLUSTER, rng: seededRng(opts.seed ^ 0x5eed), heartbeatMs: 500, nodeTimeoutMs: 3000,
    log: (line) => {
      if (!ROUTINE.some((r) => r.test(line)) && gcsLog.length < 100) gcsLog.push(line);
    },
  });
  // GCS time per view delta: the flush is the whole of it (diff, encode, publish)
  const view = { deltas: 0, flushMs: 0, bytes: 0, messages: 0, last: 0 };
  const flush = gcs.view.flush.bind(gcs.view);
  gcs.view.flush = () => {
    const before = gcs.view.version;
    const t0 = realNow();
    flush();
    if (gcs.view.version !== before) {
      view.deltas++;
      view.flushMs += realNow() - t0;
    }
  };

  // the observer: every event, hashed in order; actor states as the GCS reports them
  const hash = createHash('sha256');
  let events = 0;
  const states = new Map<string, { state: string; nodeId?: string }>();

  const observer = bus();
  observer.subscribe(s.allEvents(), (msg) =>
    timed(() => {
      events++;
      hash.update(msg.subject);
      hash.update(msg.data);
      const { body } = decode(msg.data, { registry: { event: messages.event } });
      if (body.type === 'actor_state' && body.actor) states.set(body.actor.actorId, { state: body.actor.state, nodeId: body.actor.nodeId });
    }),
  );
  observer.subscribe(s.view(), (msg) => {
    view.bytes += msg.data.length;
    view.messages++;
    view.last = msg.data.length;
  });

  const settle = async (): Promise<void> => {
    let quiet = 0;
    let passes = -1;
    while (quiet < 2) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      const still = broker.idle && gcs.queue.idle && gcs.registrations.size === 0 && broker.passes === passes;
      quiet = still ? quiet + 1 : 0;
      passes = broker.passes;
    }
  };

  const plans = new Map<string, ActorPlan>();
  const farm = new Farm({ bus: bus(), subjects: s, rng, now: () => clock.now, realNow });
  const phase = (): { wall: number; farm: number; harness: number } => ({ wall: realNow(), farm: farm.busyMs, harness: harness.busyMs });
  const gcsMs = (from: ReturnType<typeof phase>): number => realNow() - from.wall - (farm.busyMs - from.farm) - (harness.busyMs - from.harness);
  /** Advances simulated time in steps, sending the heartbeats due on the way. */
  const run = async (ms: number, stepMs = 10, each?: (now: number) => void): Promise<void> => {
    const until = clock.now + ms;
    while (clock.now < until) {
      const step = Math.min(stepMs, until - clock.now);
      await clock.advance(step, settle);
      each?.(clock.now);
      farm.beat(clock.now);
    }
    await settle();
  };

  await gcs.start();
  await settle();
  const heapBase = heap();

  // ── join ──
  log(`join: ${opts.nodes} nodes`);
  let nodeCount = 0;
  const specs = new Map<string, ReturnType<typeof nodeSpec>>();
  const join = async (count: number): Promise<void> => {
    const batch: Promise<void>[] = [];
    for (let k = 0; k < count; k++) {
      const spec = nodeSpec(nodeCount++, rng);
      specs.set(spec.nodeId, spec);
      batch.push(farm.join(spec));
    }
    await settle();
    await Promise.all(batch);
  };
  const joinFrom = phase();
  for (let left = opts.nodes; left > 0; left -= 500) await join(Math.min(500, left));
  const joinUs = (gcsMs(joinFrom) * 1000) / Math.max(1, opts.nodes);
  await run(1000);
  const heapNodes = heap();
  if (process.env.ORRERY_SIM_HEAPSNAPSHOT) (await import('node:v8')).writeHeapSnapshot(`${process.env.ORRERY_SIM_HEAPSNAPSHOT}-nodes.heapsnapshot`);

  // ── beats ──
  log('beats: 5 simulated seconds of heartbeats');
  const beatsFrom = phase();
  const sentBefore = farm.stats.heartbeatsAnswered;
  await run(5000);
  const beats = farm.stats.heartbeatsAnswered - sentBefore;
  const heartbeatUs = (gcsMs(beatsFrom) * 1000) / Math.max(1, beats);

  // ── label ──
  const someNode = [...specs.keys()][0];
  const labelBytesBefore = view.messages;
  await request(bus, s.gcs('set_node_labels'), encode('set_node_labels', { nodeId: someNode, set: { probe: 'yes' } }));
  await run(300);
  const labelDeltaBytes = view.messages > labelBytesBefore ? view.last : 0;
  if (view.messages - labelBytesBefore !== 1) violations.push(`one label change made ${view.messages - labelBytesBefore} view deltas, expected 1`);

  // ── create ──
  log(`create: ${opts.actors} actors`);
  const driver = bus();
  const liveNodes = (): string[] => [...farm.nodes.values()].filter((n) => n.alive).map((n) => n.nodeId);
  /** Where a node-id affinity may point: live nodes without the GPU taint (the actor does not tolerate it). */
  const untaintedNodes = (): string[] => liveNodes().filter((id) => Object.keys(specs.get(id)?.taints ?? {}).length === 0);
  let planned = 0;
  const register = (count: number, prefix: string, make?: (i: number) => ActorPlan): Promise<void> =>
    new Promise((resolve) => {
      const live = untaintedNodes();
      let sent = 0;
      let answered = 0;
      const next = (): void => {
        if (sent >= count) return;
        const i = sent++;
        const plan = timed(() => make?.(i) ?? actorPlan(planned++, rng, live, prefix));
        // kept for the checks without its options (what the GCS got is not the harness's to hold)
        plans.set(plan.actorId, { actorId: plan.actorId, kind: plan.kind, options: NO_OPTIONS, ...(plan.group ? { group: plan.group } : {}), ...(plan.nodeId ? { nodeId: plan.nodeId } : {}) });
        const body = timed(() =>
          encode('register_actor', {
            actorId: plan.actorId,
            code: { moduleUrl: 'file:///sim/actor.js', className: 'SimActor', args: [] },
            namespace: 'sim',
            options: { maxRestarts: -1, ...plan.options },
          }),
        );
        driver.requestCallback(s.gcs('register_actor'), body, { timeoutMs: 60_000 }, (err, msg) => {
          timed(() => {
            if (err || !msg) violations.push(`register_actor ${plan.actorId}: ${err?.message ?? 'no answer'}`);
            else {
              try {
                decodeReply(msg.data, { value: anyValue });
              } catch (e) {
                violations.push(`register_actor ${plan.actorId} refused: ${(e as Error).message}`);
              }
            }
          });
          if (++answered === count) resolve();
          else next();
        });
      };
      for (let k = 0; k < Math.min(512, count); k++) next();
      if (count === 0) resolve();
    });
  const createFrom = phase();
  const created = register(opts.actors, 'a');
  await settle();
  await created;
  // placed: every actor that can run is ALIVE (creation is answered without simulated time passing)
  const placeable = (p: ActorPlan): boolean => p.kind !== 'infeasible';
  const waitPlaced = async (limitMs: number): Promise<void> => {
    const until = clock.now + limitMs;
    while (clock.now < until) {
      const left = [...plans.values()].filter((p) => placeable(p) && states.get(p.actorId)?.state !== 'ALIVE' && states.get(p.actorId)?.state !== 'DEAD');
      if (left.length === 0) return;
      await run(50);
    }
  };
  await settle();
  const createMs = realNow() - createFrom.wall;
  const creationUs = (gcsMs(createFrom) * 1000) / Math.max(1, opts.actors);
  const creationRate = opts.actors / (createMs / 1000);
  await waitPlaced(30_000);
  // the placements' view deltas go out now, so the churn below measures churn only
  await run(200);
  const heapActors = heap();
  if (process.env.ORRERY_SIM_HEAPSNAPSHOT) (await import('node:v8')).writeHeapSnapshot(`${process.env.ORRERY_SIM_HEAPSNAPSHOT}-actors.heapsnapshot`);

  // ── churn ──
  const churnSeconds = opts.churnSeconds ?? 10;
  log(`churn: ${churnSeconds} simulated seconds`);
  const churnFrom = phase();
  const viewBytesBefore = view.bytes;
  const deltasBefore = view.deltas;
  const flushBefore = view.flushMs;
  const crashed = new Set<string>();
  let second = 0;
  await run(churnSeconds * 1000, 10, (now) => {
    if (now % 1000 !== 0) return;
    second++;

    timed(() => {
      const alive = [...states.entries()].filter(([, v]) => v.state === 'ALIVE');
      const pick = (n: number) => Array.from({ length: n }, () => alive[randomInt(rng, alive.length)]).filter(Boolean);
      // kills that restart (kill_actor, noRestart false), as an operator or the app would
      for (const [actorId] of pick(Math.ceil(alive.length * 0.002))) {
        driver.requestCallback(s.gcs('kill_actor'), encode('kill_actor', { actorId, noRestart: false }), { timeoutMs: 60_000 }, () => {});
      }
      // actor processes that die on their own
      for (const [actorId, v] of pick(Math.ceil(alive.length * 0.002))) if (v.nodeId) void farm.actorDied(v.nodeId, actorId, 'simulated worker exit');
      // a node crashes every third second; a new one joins every fourth
      if (second % 3 === 0) {
        const live = liveNodes().filter((id) => id !== someNode);
        const victim = live[randomInt(rng, live.length)];
        if (victim) {
          crashed.add(victim);
          farm.crash(victim);
        }
      }
      if (second % 4 === 0) void join(1);
    });
    // a trickle of new actors
    void register(Math.ceil(opts.actors * 0.002), `c${second}-`);
  });
  const churnMs = gcsMs(churnFrom);
  const viewBytesPerNodePerSecond = (view.bytes - viewBytesBefore) / churnSeconds;
  const viewDeltaUs = ((view.flushMs - flushBefore) * 1000) / Math.max(1, view.deltas - deltasBefore);
  // long enough for the last crash to time out (3 s) and its actors to be placed again
  await run(4000);
  await waitPlaced(30_000);
  log(`churn: ${churnMs.toFixed(0)} ms of GCS time, ${crashed.size} node(s) crashed`);

  // ── pending ──
  const pendingActors = opts.pendingActors ?? 1000;
  log(`pending: ${pendingActors} unplaceable actors`);
  const unplaceableFrom = phase();
  await register(pendingActors, 'p', (i) => ({ actorId: `p${String(i).padStart(6, '0')}`, kind: 'infeasible', options: { labelSelector: { pool: `reserved-${i}` } } }));
  await settle();
  const unplaceableMs = gcsMs(unplaceableFrom) / Math.max(1, pendingActors);
  await run(100);
  const passes: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = realNow();
    gcs.queue.kick('labels_changed');
    await settle();
    passes.push(realNow() - t0);
  }
  passes.sort((a, b) => a - b);
  const pendingPassMs = passes[Math.floor(passes.length / 2)];
  const pendingWaiting = gcs.queue.size;

  // ── check ──
  await run(1000);
  violations.push(...farm.violations);
  for (const line of gcsLog) violations.push(`the GCS logged: ${line}`);
  for (const node of farm.nodes.values()) {
    if (!node.alive) continue;
    const spec = specs.get(node.nodeId)!;
    const here = [...node.actors.keys()].map((id) => plans.get(id)).filter((p): p is ActorPlan => p !== undefined);
    for (const plan of here) {
      const problem = placementProblem(plan, spec, here);
      if (problem) violations.push(problem);
      const reported = states.get(plan.actorId);
      if (reported?.state !== 'ALIVE' || reported.nodeId !== node.nodeId) violations.push(`${plan.actorId} runs on ${node.nodeId} but the GCS reports it ${reported?.state ?? 'unknown'} on ${reported?.nodeId ?? 'no node'}`);
    }
  }
  let leftPending = 0;
  const byKind = new Map<ActorKind, number>();
  for (const plan of plans.values()) {
    const st = states.get(plan.actorId);
    if (!st) {
      violations.push(`${plan.actorId}: registered, yet the GCS never reported a state`);
      continue;
    }
    if (st.state === 'SCHEDULED') violations.push(`${plan.actorId} is stuck SCHEDULED on ${st.nodeId}`);
    if (st.state === 'ALIVE') {
      const node = st.nodeId ? farm.nodes.get(st.nodeId) : undefined;
      if (!node?.alive || !node.actors.has(plan.actorId)) violations.push(`the GCS reports ${plan.actorId} ALIVE on ${st.nodeId}, which does not run it`);
    }
    const lostItsNode = plan.kind === 'node-id' && plan.nodeId !== undefined && crashed.has(plan.nodeId);
    if ((st.state === 'PENDING' || st.state === 'RESTARTING') && placeable(plan) && !lostItsNode) {
      leftPending++;
      byKind.set(plan.kind, (byKind.get(plan.kind) ?? 0) + 1);
    }
  }
  if (leftPending) log(`left pending: ${[...byKind].map(([k, n]) => `${k} ${n}`).join(', ')}`);

  const result: SimResult = {
    nodes: opts.nodes,
    actors: opts.actors,
    seed: opts.seed,
    traceHash: hash.digest('hex'),
    events,
    joinUs,
    heartbeatUs,
    heartbeatCoreShare: (heartbeatUs / 1e6) * (opts.nodes / 0.5),
    creationUs,
    creationRate,
    viewDeltaUs,
    viewBytesPerNodePerSecond,
    labelDeltaBytes,
    bytesPerNode: (heapNodes - heapBase) / opts.nodes,
    bytesPerActor: (heapActors - heapNodes) / opts.actors,
    unplaceableMs,
    pendingPassMs,
    pendingWaiting,
    leftPending,
    violations,
    wallSeconds: (realNow() - started) / 1000,
  };
  await gcs.stop();
  for (const b of buses) await b.close();
  return result;
}

async function request(bus: () => Bus, subject: string, body: Uint8Array): Promise<void> {
  const msg = await bus().request(subject, body, { timeoutMs: 60_000 });
  decodeReply(msg.data, { value: anyValue });
}

/** Heap in use after a full collection (needs --expose-gc; without it, without the collection). */
function heap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}
