// runtime/ — the public surface of the cluster runtime: connect to a cluster or start one, define
// actors, and the errors a running cluster raises. The package entry re-exports all of it.
//
// What this file loads at once is what `import … from 'orrery'` costs every process that does it —
// a worker host loading a user's actor module among them (spec/runtime/process-graphs.spec.ts). So it
// loads definitions, errors and types only: connect() and startLocalCluster() load the client and
// the local clusters on their first call. In a worker host that took importing the package from
// ~70 ms and +4 MB of resident memory to ~28 ms and +0.8 MB (docs/benchmarks.md).
import type { Cluster, ConnectOptions } from './client/index.ts';
import type { LocalCluster, LocalClusterOptions } from './local/index.ts';

export type {
  ActorBuilder,
  ActorCaller,
  CallOptions,
  ActorEvictedEvent,
  ActorClass,
  ActorHandle,
  ActorInfo,
  ActorOptions,
  ActorState,
  ActorStateEvent,
  Cluster,
  ClusterEvent,
  ConnectOptions,
  JobEvent,
  JobInfo,
  JobSpec,
  MethodArgs,
  MethodNames,
  MethodResult,
  NodeEvent,
  NodeInfo,
  ClientPlacementGroupOptions,
  PlacementGroup,
  PlacementGroupInfo,
  PlacementGroupOptions,
  PlacementGroupState,
  PlacementGroupStateEvent,
  GcsStatus,
  RecentEvents,
  ScheduleFailedEvent,
  TaskOptions,
} from './client/index.ts';
export { defineActor } from './client/actor-class.ts';
export { ActorArgumentError, CallAbortedError, CallArgumentError, GcsUnavailableError } from './client/errors.ts';
export { defineTask } from './client/task-function.ts';
export { NoNodesError, TaskAbortedError, TaskArgumentError, TaskNodeDiedError, TaskQueueFullError, TaskWorkerDiedError } from './client/task-errors.ts';
export type { AnyFunction, TaskBuilder, TaskFunction, TaskResult, TaskRunOptions } from './client/index.ts';
export { NatsServerMissingError } from './local/nats-server.ts';
export type { LocalCluster, LocalClusterOptions, NodeSpec, Transport } from './local/index.ts';

/**
 * Connects a driver to a cluster. An unreachable server is a CONNECTION_FAILED error naming the address.
 *
 * Inside an actor or a task, `connect()` with no argument returns the cluster the worker belongs to,
 * on the worker host's own connection: what it creates is owned by the job of the calling actor
 * or task (docs/jobs.md), and its close() does nothing. With options it connects anew, as anywhere.
 * (The client is loaded on the first call: see runtime/client/connect.ts.)
 */
export function connect(opts?: ConnectOptions): Promise<Cluster> {
  return import('./client/connect.ts').then((client) => client.connect(opts));
}

/**
 * Starts a cluster with one raylet per node spec and returns a connected client. Without a
 * transport: 'nats' when an address is given or a nats-server binary is available, else 'memory'.
 * (The local clusters are loaded on the first call: see runtime/local/index.ts.)
 */
export function startLocalCluster(opts: LocalClusterOptions): Promise<LocalCluster> {
  return import('./local/index.ts').then((local) => local.startLocalCluster(opts));
}
export { getRuntimeContext } from './worker/context.ts';
export {
  ActorDiedError,
  ActorFencedError,
  ActorNameTakenError,
  ActorNotFoundError,
  ActorUnavailableError,
  CodeLoadError,
  CodeSourceRefusedError,
  JobFinishedError,
  JobNotFoundError,
  JobNotOwnedError,
  NodeStoppingError,
  PlacementGroupNameTakenError,
  PlacementGroupNotFoundError,
  PlacementGroupRemovedError,
  RemoteError,
  WaitTimeoutError,
} from './errors.ts';
export { BusClosedError, ConnectionFailedError, ConnectionLostError, PermissionDeniedError, TimeoutError as RequestTimeoutError } from './bus/errors.ts';
export { authInit, type AuthFiles, type AuthInitOptions } from './auth/init.ts';
export { ROLES, rolePermissions, type Role, type RolePermissions } from './auth/roles.ts';
export { CredentialsError } from './auth/credentials.ts';
