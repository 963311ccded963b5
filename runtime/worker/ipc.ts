import type { WireError } from '../../protocols/errors.ts';
import type { CreateActor } from '../../protocols/messages/actor.ts';
import type { HostNode } from './host.ts';
import type { RunTask } from './task-runner.ts';

/**
 * The Node IPC protocol between a raylet and a worker host it forked (`fork` with `serialization:
 * 'advanced'`, so constructor arguments keep their binary values). Requests carry an `id` that the
 * host's result repeats.
 *
 * Every IPC message is a write on each side (a system call, a serialization, a read event), so the
 * creates and kills of one event-loop turn travel as one `requests` message, in the order they were
 * made, and the results of one turn as one `results` message (TurnBatch). The host handles a list's
 * requests in order, so a kill after a create of the same actor still finds it starting.
 *
 *   raylet → host   init      once, first: the cluster, the NATS address and the node, and the
 *                             lease the host starts with (absent: the raylet does not fence)
 *                   renew     the raylet's fence lease, renewed with each acknowledged heartbeat:
 *                             answer calls for `remainingMs` more (less the time since `sentAt`,
 *                             wall clock); a host fenced before resubscribes its actors
 *                   fence     the raylet fenced itself: stop answering calls now (lease-watchdog.ts)
 *                   requests  creates and kills, in order:
 *                               create  start an actor (a createActor body); its result once its
 *                                       constructor returned
 *                               kill    drop an actor; result value: whether the host held it
 *                   tasks   run tasks (each a RunTask with an id); the host answers each driver on
 *                           its `reply` itself. Tasks handed over in one turn travel in one message.
 *                   revoke  end these leases (at once, or after their running task)
 *                   exit    stop every actor, drain the NATS connection, exit 0
 *   host → raylet   ready   connected to NATS and taking creates; carries the host's pid
 *                   failed  init failed (NATS unreachable); the host exits 1 after sending it
 *                   results the answers to creates and kills, each ok, or a wire error (code, message,
 *                           detail), by request id
 *                   ended   tasks that ended (their answers are sent), by id, and leases that ended:
 *                           the raylet frees their resources. Sent after the answers, gathering the
 *                           tasks and leases of one turn.
 *
 * A host exits as soon as the IPC channel disconnects, i.e. when its raylet died, so no host
 * outlives its raylet. Anything sent directly (tasks, revoke, exit) first sends the requests
 * gathered so far, so the host sees everything in the order the raylet asked for it.
 */
export type ActorRequest =
  | { readonly type: 'create'; readonly id: number; readonly actor: CreateActor }
  | { readonly type: 'kill'; readonly id: number; readonly actorId: string };

export type ActorResult =
  | { readonly id: number; readonly ok: true; readonly value?: unknown }
  | { readonly id: number; readonly ok: false; readonly error: WireError };

/** The raylet's fence as a host follows it (runtime/raylet/fence.ts, ./lease-watchdog.ts). */
export type HostLease = { readonly type: 'renew'; readonly remainingMs: number; readonly sentAt: number } | { readonly type: 'fence' };

export type RayletToHost =
  | { readonly type: 'init'; readonly cluster: string; readonly natsAddress: string; readonly node: HostNode; readonly lease?: HostLease }
  | HostLease
  | { readonly type: 'requests'; readonly requests: readonly ActorRequest[] }
  | { readonly type: 'tasks'; readonly tasks: readonly { readonly id: number; readonly task: RunTask }[] }
  | { readonly type: 'revoke'; readonly leaseIds: readonly string[] }
  | { readonly type: 'exit' };

export type HostToRaylet =
  | { readonly type: 'ready'; readonly pid: number }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'ended'; readonly ids: readonly number[]; readonly leases?: readonly string[] }
  | { readonly type: 'results'; readonly results: readonly ActorResult[] };

const RAYLET_TYPES = new Set(['init', 'requests', 'tasks', 'revoke', 'exit', 'renew', 'fence']);
const HOST_TYPES = new Set(['ready', 'failed', 'results', 'ended']);

/**
 * Gathers what one event-loop turn produces and hands it over as one list, in order, in the check
 * phase of the loop (setImmediate) — after the turn's I/O callbacks and their promise chains, so a
 * burst of NATS messages read together becomes one IPC message. `flush()` hands over at once.
 */
export class TurnBatch<T> {
  #items: T[] = [];
  #scheduled = false;

  constructor(private readonly deliver: (items: T[]) => void) {}

  get size(): number {
    return this.#items.length;
  }

  push(item: T): void {
    this.#items.push(item);
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.flush();
    });
  }

  flush(): void {
    if (this.#items.length === 0) return;
    const items = this.#items;
    this.#items = [];
    this.deliver(items);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Shallow check of what the raylet sent; the create body is validated again by its own validator. */
export function isRayletToHost(value: unknown): value is RayletToHost {
  if (!isRecord(value) || typeof value.type !== 'string' || !RAYLET_TYPES.has(value.type)) return false;
  if (value.type === 'requests') return Array.isArray(value.requests) && value.requests.every(isActorRequest);
  if (value.type === 'revoke') return Array.isArray(value.leaseIds) && value.leaseIds.every((id) => typeof id === 'string');
  if (value.type === 'tasks') return Array.isArray(value.tasks) && value.tasks.every((t) => isRecord(t) && typeof t.id === 'number' && isRunTask(t.task));
  if (value.type === 'init') {
    const lease = value.lease === undefined || isHostLease(value.lease);
    return lease && typeof value.cluster === 'string' && typeof value.natsAddress === 'string' && isRecord(value.node);
  }
  if (value.type === 'renew') return isHostLease(value);
  return true;
}

function isHostLease(value: unknown): value is HostLease {
  if (!isRecord(value)) return false;
  if (value.type === 'fence') return true;
  return value.type === 'renew' && typeof value.remainingMs === 'number' && typeof value.sentAt === 'number';
}

function isActorRequest(value: unknown): value is ActorRequest {
  if (!isRecord(value) || typeof value.id !== 'number') return false;
  if (value.type === 'create') return isRecord(value.actor);
  return value.type === 'kill' && typeof value.actorId === 'string';
}

function isActorResult(value: unknown): value is ActorResult {
  return isRecord(value) && typeof value.id === 'number' && typeof value.ok === 'boolean' && (value.ok || isRecord(value.error));
}

function isRunTask(value: unknown): value is RunTask {
  if (!isRecord(value) || typeof value.taskId !== 'string' || typeof value.reply !== 'string' || !isRecord(value.code)) return false;
  const { moduleUrl, functionName, args } = value.code;
  return typeof moduleUrl === 'string' && typeof functionName === 'string' && Array.isArray(args);
}

export function isHostToRaylet(value: unknown): value is HostToRaylet {
  if (!isRecord(value) || typeof value.type !== 'string' || !HOST_TYPES.has(value.type)) return false;
  if (value.type === 'ready') return typeof value.pid === 'number';
  if (value.type === 'failed') return typeof value.message === 'string';
  if (value.type === 'ended') {
    const leases = value.leases === undefined || (Array.isArray(value.leases) && value.leases.every((id) => typeof id === 'string'));
    return leases && Array.isArray(value.ids) && value.ids.every((id) => typeof id === 'number');
  }
  return Array.isArray(value.results) && value.results.every(isActorResult);
}
