// runtime/ — the public surface of the cluster runtime: connect to a cluster or start one, define
// actors, and the errors a running cluster raises. The package entry re-exports all of it.
export {
  connect,
  defineActor,
  GcsUnavailableError,
  type ActorBuilder,
  type ActorCaller,
  type CallOptions,
  type ActorEvictedEvent,
  type ActorClass,
  type ActorHandle,
  type ActorInfo,
  type ActorOptions,
  type ActorState,
  type ActorStateEvent,
  type Cluster,
  type ClusterEvent,
  type ConnectOptions,
  type JobEvent,
  type JobInfo,
  type JobSpec,
  type MethodArgs,
  type MethodNames,
  type MethodResult,
  type NodeEvent,
  type NodeInfo,
  type ClientPlacementGroupOptions,
  type PlacementGroup,
  type PlacementGroupInfo,
  type PlacementGroupOptions,
  type PlacementGroupState,
  type PlacementGroupStateEvent,
  type GcsStatus,
  type RecentEvents,
  type ScheduleFailedEvent,
  type TaskOptions,
} from './client/index.ts';
export {
  ActorArgumentError,
  defineTask,
  NoNodesError,
  TaskArgumentError,
  TaskNodeDiedError,
  TaskWorkerDiedError,
  type AnyFunction,
  type TaskBuilder,
  type TaskFunction,
  type TaskResult,
  type TaskRunOptions,
} from './client/index.ts';
export { startLocalCluster, NatsServerMissingError, type LocalCluster, type LocalClusterOptions, type NodeSpec, type Transport } from './local/index.ts';
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
