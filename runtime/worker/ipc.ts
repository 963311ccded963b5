import type { WireError } from '../../protocols/errors.ts';
import type { CreateActor } from '../../protocols/messages/actor.ts';
import type { HostNode } from './host.ts';
import type { RunTask } from './task-runner.ts';

/**
 * The Node IPC protocol between a raylet and a worker host it forked (`fork` with `serialization:
 * 'advanced'`, so constructor arguments keep their binary values). Requests carry an `id` that the
 * host's `result` repeats.
 *
 *   raylet → host   init    once, first: the cluster, the NATS address and the node
 *                   create  start an actor (a createActor body); result once its constructor returned
 *                   kill    drop an actor; result value: whether the host held it
 *                   tasks   run tasks (each a RunTask with an id); the host answers each driver on
 *                           its `reply` itself. Tasks handed over in one turn travel in one message.
 *                   revoke  end these leases (at once, or after their running task)
 *                   exit    stop every actor, drain the NATS connection, exit 0
 *   host → raylet   ready   connected to NATS and taking creates; carries the host's pid
 *                   failed  init failed (NATS unreachable); the host exits 1 after sending it
 *                   result  the answer to create or kill: ok, or a wire error (code, message, detail)
 *                   ended   tasks that ended (their answers are sent), by id, and leases that ended:
 *                           the raylet frees their resources. Sent after the answers, gathering the
 *                           tasks and leases of one turn.
 *
 * A host exits as soon as the IPC channel disconnects, i.e. when its raylet died, so no host
 * outlives its raylet.
 */
export type RayletToHost =
  | { readonly type: 'init'; readonly cluster: string; readonly natsAddress: string; readonly node: HostNode }
  | { readonly type: 'create'; readonly id: number; readonly actor: CreateActor }
  | { readonly type: 'kill'; readonly id: number; readonly actorId: string }
  | { readonly type: 'tasks'; readonly tasks: readonly { readonly id: number; readonly task: RunTask }[] }
  | { readonly type: 'revoke'; readonly leaseIds: readonly string[] }
  | { readonly type: 'exit' };

export type HostToRaylet =
  | { readonly type: 'ready'; readonly pid: number }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'ended'; readonly ids: readonly number[]; readonly leases?: readonly string[] }
  | { readonly type: 'result'; readonly id: number; readonly ok: true; readonly value?: unknown }
  | { readonly type: 'result'; readonly id: number; readonly ok: false; readonly error: WireError };

const RAYLET_TYPES = new Set(['init', 'create', 'kill', 'tasks', 'revoke', 'exit']);
const HOST_TYPES = new Set(['ready', 'failed', 'result', 'ended']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Shallow check of what the raylet sent; the create body is validated again by its own validator. */
export function isRayletToHost(value: unknown): value is RayletToHost {
  if (!isRecord(value) || typeof value.type !== 'string' || !RAYLET_TYPES.has(value.type)) return false;
  if (value.type === 'create') return typeof value.id === 'number' && isRecord(value.actor);
  if (value.type === 'kill') return typeof value.id === 'number' && typeof value.actorId === 'string';
  if (value.type === 'revoke') return Array.isArray(value.leaseIds) && value.leaseIds.every((id) => typeof id === 'string');
  if (value.type === 'tasks') return Array.isArray(value.tasks) && value.tasks.every((t) => isRecord(t) && typeof t.id === 'number' && isRunTask(t.task));
  if (value.type === 'init') return typeof value.cluster === 'string' && typeof value.natsAddress === 'string' && isRecord(value.node);
  return true;
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
  return typeof value.id === 'number' && typeof value.ok === 'boolean' && (value.ok || isRecord(value.error));
}
