/**
 * What must hold of a cluster after failures, checked from the outside — from `nodes()`, `actors()`
 * and the actors themselves — and written independently of the GCS's own checks (only lib's parsing
 * and matching of options is shared), so the chaos bench and its spec test the GCS rather than
 * repeat it:
 *
 *   alive        every expected actor is ALIVE on an ALIVE node
 *   constraints  its hard constraints hold on that node: a selector tier, hard node affinity, a hard
 *                node-id pin, every NoSchedule/NoExecute taint tolerated, and hard actor affinity
 *                and anti-affinity among the other actors there
 *   resources    each node's available = total − what the actors on it hold (no leak, no double count)
 *   incarnations each actor answers from exactly one live instance, on the node the GCS names
 *                (findIncarnations: a call published to every subscriber of the actor's subject)
 *   one at once  from call answers recorded while a fault ran (answerOverlaps): no two
 *                incarnations of an actor answered at the same instant — issue 13's fencing
 */
import { randomBytes } from 'node:crypto';
import { compileRequest, type PlacementOptions } from '../../lib/scheduling/request.ts';
import { formatResources } from '../../lib/resources/resource-set.ts';
import { conditionMatches, expressionMatches, describeExpression, type LabelMatchExpression } from '../../lib/selectors/expression.ts';
import { parseTaints, tolerates } from '../../lib/scheduling/taints.ts';
import { encode } from '../../protocols/codec.ts';
import { decodeReply } from '../../protocols/reply.ts';
import type { ClusterSubjects } from '../../protocols/subjects.ts';
import { unknown } from '../../protocols/validate.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import type { ActorInfo, NodeInfo } from '../../runtime/index.ts';

export interface ExpectedActor {
  readonly actorId: string;
  readonly namespace: string;
  /** The placement options it was created with. */
  readonly options: PlacementOptions;
}

export type ViolationKind = 'not_alive' | 'constraint' | 'resource_leak' | 'duplicate' | 'wrong_node' | 'unreachable' | 'overlap' | 'stale_answer' | 'restarted' | 'node_died';

export interface Violation {
  readonly kind: ViolationKind;
  readonly id: string;
  readonly detail: string;
}

export interface InvariantInput {
  readonly nodes: readonly NodeInfo[];
  readonly actors: readonly ActorInfo[];
  readonly expected: readonly ExpectedActor[];
  /** The cluster's rare resources (their tolerations are automatic). */
  readonly rareResources?: readonly string[];
}

const EPSILON = 1e-6;

/** Checks alive, constraints and resources; returns every violation found (empty: all hold). */
export function checkInvariants(input: InvariantInput): Violation[] {
  const violations: Violation[] = [];
  const nodes = new Map(input.nodes.map((n) => [n.nodeId, n]));
  const actors = new Map(input.actors.map((a) => [a.actorId, a]));
  const placedOn = new Map<string, ActorInfo[]>();
  for (const a of input.actors) {
    if ((a.state === 'ALIVE' || a.state === 'SCHEDULED') && a.nodeId !== undefined) {
      const list = placedOn.get(a.nodeId) ?? [];
      list.push(a);
      placedOn.set(a.nodeId, list);
    }
  }
  const held = new Map<string, Record<string, number>>();
  for (const exp of input.expected) held.set(exp.actorId, formatResources(compileRequest(exp.options, { namespace: exp.namespace, defaultCpus: 0 }).resources));
  for (const exp of input.expected) {
    const info = actors.get(exp.actorId);
    const node = info?.nodeId === undefined ? undefined : nodes.get(info.nodeId);
    if (!info || info.state !== 'ALIVE' || !node || node.state !== 'ALIVE') {
      violations.push({ kind: 'not_alive', id: exp.actorId, detail: `${info?.state ?? 'unknown'}${info?.nodeId ? ` on ${info.nodeId} (${node?.state ?? 'no such node'})` : ''}${info?.pendingReason ? `: ${info.pendingReason}` : ''}` });
      continue;
    }
    const broken = brokenOn(node, exp, placedOn.get(node.nodeId) ?? [], input.rareResources ?? []);
    if (broken) violations.push({ kind: 'constraint', id: exp.actorId, detail: `on ${node.name} (${node.nodeId}): ${broken}` });
  }
  for (const node of input.nodes) {
    if (node.state === 'DEAD') continue;
    const used: Record<string, number> = {};
    for (const a of placedOn.get(node.nodeId) ?? []) {
      for (const [r, q] of Object.entries(held.get(a.actorId) ?? {})) used[r] = (used[r] ?? 0) + q;
    }
    for (const r of new Set([...Object.keys(node.resources.total), ...Object.keys(used)])) {
      const want = (node.resources.total[r] ?? 0) - (used[r] ?? 0);
      const have = node.resources.available[r] ?? 0;
      if (Math.abs(want - have) > EPSILON) violations.push({ kind: 'resource_leak', id: node.nodeId, detail: `${node.name}: ${r} available ${have}, but total ${node.resources.total[r] ?? 0} − held ${used[r] ?? 0} = ${want}` });
    }
  }
  return violations;
}

/** The first hard constraint of `exp` that does not hold on `node`, described; undefined when all hold. */
function brokenOn(node: NodeInfo, exp: ExpectedActor, placed: readonly ActorInfo[], rareResources: readonly string[]): string | undefined {
  const req = compileRequest(exp.options, { namespace: exp.namespace, rareResources });
  if (!req.selectorTiers.some((tier) => tier.every((e) => expressionMatches(e, node.labels)))) return 'no label selector tier matches';
  for (const e of req.nodeAffinity) if (!e.soft && !expressionMatches(e, node.labels)) return `node affinity ${describeExpression(e)}`;
  if (req.nodeId && !req.nodeId.soft && req.nodeId.nodeId !== node.nodeId) return `node-id affinity to ${req.nodeId.nodeId}`;
  for (const t of parseTaints(node.taints, { allowReserved: true })) {
    if (t.effect !== 'PreferNoSchedule' && !tolerates(req.tolerations, t)) return `untolerated taint ${t.key}=${t.value}:${t.effect}`;
  }
  const others = placed.filter((a) => a.actorId !== exp.actorId);
  for (const e of req.actorAffinity) if (!e.soft && !actorTermHolds(e, others, exp.namespace)) return `actor ${isAnti(e) ? 'anti-affinity' : 'affinity'} ${describeExpression(e)}`;
  return undefined;
}

const isAnti = (e: LabelMatchExpression): boolean => e.operator === 'NOT_IN' || e.operator === 'DOES_NOT_EXIST';

/** Seed 000: IN/EXISTS/GT/LT need some other actor there with a matching label; NOT_IN/DOES_NOT_EXIST need none. */
function actorTermHolds(e: LabelMatchExpression, others: readonly ActorInfo[], namespace: string): boolean {
  const ns = e.namespace ?? namespace;
  const values = others.filter((a) => a.namespace === ns).map((a) => (Object.hasOwn(a.labels, e.key) ? a.labels[e.key] : undefined));
  if (e.operator === 'NOT_IN') return !values.some((v) => v !== undefined && e.values.includes(v));
  if (e.operator === 'DOES_NOT_EXIST') return !values.some((v) => v !== undefined);
  return values.some((v) => conditionMatches(e, v));
}

/**
 * Asks every live instance of each actor where it runs: one call published (not requested) to the
 * actor's subject with a reply subject of ours, so every subscriber answers; replies are collected
 * for `windowMs`. More than one answer is a duplicate incarnation; an answer from another node than
 * the GCS names is a wrong node; none at all is unreachable.
 */
export async function findIncarnations(
  bus: Bus,
  subjects: ClusterSubjects,
  actors: readonly ActorInfo[],
  opts: { method: string; windowMs?: number },
): Promise<Violation[]> {
  const inbox = `_INBOX.chaos_${randomBytes(6).toString('hex')}`;
  const answers = new Map<string, { nodeId: string; pid: number }[]>();
  const sub = bus.subscribe(`${inbox}.*`, (msg) => {
    const actorId = msg.subject.slice(inbox.length + 1);
    try {
      const where = decodeReply(msg.data, { value: unknown() }) as { nodeId: string; pid: number };
      answers.set(actorId, [...(answers.get(actorId) ?? []), where]);
    } catch {
      answers.set(actorId, [...(answers.get(actorId) ?? []), { nodeId: '?', pid: -1 }]);
    }
  });
  await bus.flush();
  const call = encode('actor_call', { method: opts.method, args: [] });
  for (const a of actors) bus.publish(subjects.actorCall(a.actorId), call, { reply: `${inbox}.${a.actorId}` });
  await bus.flush();
  await new Promise((resolve) => setTimeout(resolve, opts.windowMs ?? 1000));
  sub.unsubscribe();
  const violations: Violation[] = [];
  for (const a of actors) {
    const got = answers.get(a.actorId) ?? [];
    if (got.length === 0) violations.push({ kind: 'unreachable', id: a.actorId, detail: `no instance answered (GCS: ${a.state} on ${a.nodeId})` });
    else if (got.length > 1) violations.push({ kind: 'duplicate', id: a.actorId, detail: `${got.length} live instances: ${got.map((g) => `${g.nodeId}/pid ${g.pid}`).join(', ')}` });
    else if (got[0].nodeId !== a.nodeId) violations.push({ kind: 'wrong_node', id: a.actorId, detail: `answers from ${got[0].nodeId}, the GCS says ${a.nodeId}` });
  }
  return violations;
}

/** One answered call: which incarnation (process, instance token) answered, and when (ms, one clock). */
export interface AnswerRecord {
  readonly actorId: string;
  readonly incarnation: string;
  readonly pid: number;
  readonly sentAt: number;
  readonly answeredAt: number;
}

/**
 * No two incarnations of an actor answering at the same instant, from the answers themselves: each
 * incarnation's span runs from the send of its first answered call to its last answer, and the
 * spans of one actor must not overlap. With one sequential caller per actor this also catches two
 * incarnations subscribed at once (NATS hands each call to both; the first answer wins, so their
 * answers interleave). Answers after `staleAfter` (e.g. a frozen raylet's SIGCONT) from an
 * incarnation in `staleIncarnations` are stale answers.
 */
export function answerOverlaps(records: readonly AnswerRecord[], stale?: { after: number; incarnations: ReadonlySet<string> }): Violation[] {
  const byActor = new Map<string, Map<string, { pid: number; from: number; to: number }>>();
  const violations: Violation[] = [];
  for (const r of records) {
    const spans = byActor.get(r.actorId) ?? new Map();
    byActor.set(r.actorId, spans);
    const span = spans.get(r.incarnation);
    if (span) {
      span.from = Math.min(span.from, r.sentAt);
      span.to = Math.max(span.to, r.answeredAt);
    } else spans.set(r.incarnation, { pid: r.pid, from: r.sentAt, to: r.answeredAt });
    if (stale && r.answeredAt > stale.after && stale.incarnations.has(r.incarnation)) {
      violations.push({ kind: 'stale_answer', id: r.actorId, detail: `incarnation ${r.incarnation} (pid ${r.pid}) answered ${(r.answeredAt - stale.after).toFixed(0)} ms after its raylet resumed` });
    }
  }
  for (const [actorId, spans] of byActor) {
    const ordered = [...spans.entries()].sort((a, b) => a[1].from - b[1].from);
    for (let i = 1; i < ordered.length; i++) {
      const [prevId, prev] = ordered[i - 1];
      const [nextId, next] = ordered[i];
      if (prev.to > next.from) {
        violations.push({ kind: 'overlap', id: actorId, detail: `incarnation ${prevId} (pid ${prev.pid}) answered until ${prev.to.toFixed(0)} ms, after ${nextId} (pid ${next.pid}) began at ${next.from.toFixed(0)} ms` });
      }
    }
  }
  return violations;
}
