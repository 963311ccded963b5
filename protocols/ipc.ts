import type { WireError } from './errors.ts';
import { ProtocolError } from './errors.ts';
import type { CreateActor } from './messages/actor.ts';
import { wireError } from './messages/reply.ts';
import { array, bool, check, isPlainObject, invalid, literal, num, object, optional, plainData, record, str, unknown, type Validator } from './validate.ts';

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
 *   raylet → host   init      once, first: the cluster, the NATS address and the node, the lease
 *                             the host starts with (absent: the raylet does not fence), and the
 *                             node's code roots (absent: code from any file: URL; code-source.ts)
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
 *
 * Both directions pass a validator of this module (the same combinators, limits and plain-data rule
 * as every NATS message, protocols/validate.ts) before anything reads them: a message that fails is
 * refused with INVALID_MESSAGE and its path, counted and logged by the receiving side, never acted
 * on. A create's `actor` is checked again, on its own, by the createActor validator where it is
 * handled, so one bad create fails that create and not the others of its list.
 */

/** The node a host runs on, as getRuntimeContext() reports it. */
export interface HostNode {
  readonly nodeId: string;
  readonly nodeName: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** A lease as the raylet grants it to a task host (protocols/messages/task.ts, `taskLease`). */
export interface LeaseGrant {
  readonly leaseId: string;
  /** Ends after this long without a task. */
  readonly idleMs: number;
  /** Takes no task after this long from its grant: the next one is decided by a raylet afresh. */
  readonly lifetimeMs: number;
}

/** One task a task host runs. */
export interface RunTask {
  readonly taskId: string;
  readonly code: { readonly moduleUrl: string; readonly functionName: string; readonly args: readonly unknown[] };
  /** Where the driver waits: the host answers the submission there itself. */
  readonly reply: string;
  /** A lease to serve after this task, granted with its answer (task-leases.ts). */
  readonly lease?: LeaseGrant;
  /** The job it runs for and its namespace (submit_task's): connect() inside the task creates under them. */
  readonly jobId?: string;
  readonly namespace?: string;
  /** Its driver can cancel it (submit_task's `cancelKey`): the task's runtime context gets a signal the raylet's `cancel` aborts. */
  readonly cancellable?: boolean;
}

export type ActorRequest =
  | { readonly type: 'create'; readonly id: number; readonly actor: CreateActor }
  | { readonly type: 'kill'; readonly id: number; readonly actorId: string };

export type ActorResult =
  | { readonly id: number; readonly ok: true; readonly value?: unknown }
  | { readonly id: number; readonly ok: false; readonly error: WireError };

/** Paths (never contents) of the credentials and TLS files the host connects with: the node's own. */
export interface HostNatsAccess {
  readonly creds?: string;
  readonly tls?: { readonly ca?: string; readonly cert?: string; readonly key?: string };
}

/** The raylet's fence as a host follows it (runtime/raylet/fence.ts, runtime/worker/lease-watchdog.ts). */
export type HostLease = { readonly type: 'renew'; readonly remainingMs: number; readonly sentAt: number } | { readonly type: 'fence' };

export type RayletToHost =
  | { readonly type: 'init'; readonly cluster: string; readonly natsAddress: string; readonly natsAccess?: HostNatsAccess; readonly node: HostNode; readonly lease?: HostLease; readonly codeRoots?: readonly string[] }
  | HostLease
  | { readonly type: 'requests'; readonly requests: readonly ActorRequest[] }
  | { readonly type: 'tasks'; readonly tasks: readonly { readonly id: number; readonly task: RunTask }[] }
  | { readonly type: 'revoke'; readonly leaseIds: readonly string[] }
  /** Its driver cancelled these running tasks (cancel_task, key checked by the raylet): their signals abort. */
  | { readonly type: 'cancel'; readonly taskIds: readonly string[] }
  | { readonly type: 'exit' };

export type HostToRaylet =
  | { readonly type: 'ready'; readonly pid: number }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'ended'; readonly ids: readonly number[]; readonly leases?: readonly string[] }
  | { readonly type: 'results'; readonly results: readonly ActorResult[] };

/** The most entries one IPC list carries (a turn's creates, kills, tasks or results). */
const MAX_ITEMS = 100_000;
const token = str({ min: 1, max: 256 });
const requestId = num({ int: true, min: 0 });
const path = str({ min: 1, max: 4096 });

/** One of several shapes, told apart by `type`. */
function byType<T>(shapes: Readonly<Record<string, Validator<unknown>>>): Validator<T> {
  return (value, at) => {
    if (!isPlainObject(value)) return invalid(at, 'expected an object');
    const type = value.type;
    const shape = typeof type === 'string' && Object.hasOwn(shapes, type) ? shapes[type] : undefined;
    if (shape === undefined) return invalid(at === '' ? 'type' : `${at}.type`, `expected one of ${Object.keys(shapes).join(', ')}`);
    return shape(value, at) as T;
  };
}

/** An object passed on as it came (its own validator runs where it is handled). */
const anObject: Validator<Record<string, unknown>> = (value, at) => (isPlainObject(value) ? value : invalid(at, 'expected an object'));

const renew = object({ type: literal('renew'), remainingMs: num({ min: 0 }), sentAt: num() });
const fence = object({ type: literal('fence') });
const hostLease = byType<HostLease>({ renew, fence });
const leaseGrant = object({ leaseId: token, idleMs: num({ min: 0 }), lifetimeMs: num({ min: 0 }) });
const runTask: Validator<RunTask> = object({
  taskId: token,
  code: object({ moduleUrl: str({ min: 1, max: 8192 }), functionName: str({ min: 1, max: 256 }), args: array(plainData(), { max: 10_000 }) }),
  reply: str({ min: 1, max: 1024 }),
  lease: optional(leaseGrant),
  jobId: optional(token),
  namespace: optional(str({ min: 1, max: 256 })),
  cancellable: optional(bool()),
});
const actorRequest = byType<ActorRequest>({
  create: object({ type: literal('create'), id: requestId, actor: anObject }) as Validator<unknown>,
  kill: object({ type: literal('kill'), id: requestId, actorId: token }),
});

const rayletToHost = byType<RayletToHost>({
  init: object({
    type: literal('init'),
    cluster: token,
    natsAddress: str({ min: 1, max: 4096 }),
    natsAccess: optional(object({ creds: optional(path), tls: optional(object({ ca: optional(path), cert: optional(path), key: optional(path) })) })),
    node: object({ nodeId: token, nodeName: str({ min: 1, max: 256 }), labels: record(str({ max: 256 }), { maxKeys: 1024 }) }),
    lease: optional(hostLease),
    codeRoots: optional(array(path, { max: 256 })),
  }),
  renew,
  fence,
  requests: object({ type: literal('requests'), requests: array(actorRequest, { max: MAX_ITEMS }) }),
  tasks: object({ type: literal('tasks'), tasks: array(object({ id: requestId, task: runTask }), { max: MAX_ITEMS }) }),
  revoke: object({ type: literal('revoke'), leaseIds: array(token, { max: MAX_ITEMS }) }),
  cancel: object({ type: literal('cancel'), taskIds: array(token, { max: MAX_ITEMS }) }),
  exit: object({ type: literal('exit') }),
});

const actorResult: Validator<ActorResult> = (value, at) => {
  const r = object({ id: requestId, ok: bool(), value: unknown(), error: optional(wireError) })(value, at);
  if (!r.ok && r.error === undefined) return invalid(`${at}.error`, 'a failed result carries its error');
  return r as ActorResult;
};

const hostToRaylet = byType<HostToRaylet>({
  ready: object({ type: literal('ready'), pid: num({ int: true, min: 0 }) }),
  failed: object({ type: literal('failed'), message: str({ max: 65_536 }) }),
  ended: object({ type: literal('ended'), ids: array(requestId, { max: MAX_ITEMS }), leases: optional(array(token, { max: MAX_ITEMS })) }),
  results: object({ type: literal('results'), results: array(actorResult, { max: MAX_ITEMS }) }),
});

/** What the raylet sent, checked; anything else is a ProtocolError INVALID_MESSAGE naming the path. */
export function parseRayletToHost(value: unknown): RayletToHost {
  return check(rayletToHost, value);
}

/** What the host sent, checked; anything else is a ProtocolError INVALID_MESSAGE naming the path. */
export function parseHostToRaylet(value: unknown): HostToRaylet {
  return check(hostToRaylet, value);
}

export function isRayletToHost(value: unknown): value is RayletToHost {
  return accepts(() => parseRayletToHost(value));
}

export function isHostToRaylet(value: unknown): value is HostToRaylet {
  return accepts(() => parseHostToRaylet(value));
}

function accepts(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch (err) {
    if (err instanceof ProtocolError) return false;
    throw err;
  }
}
