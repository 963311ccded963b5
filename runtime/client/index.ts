// runtime/client — the driver API: connect to a cluster, define actor classes, create and call actors.
export { connect, resolveAddress, DEFAULT_ADDRESS, type ConnectOptions } from './connect.ts';
export type { Cluster } from './cluster.ts';
export { defineActor, type ActorClass, type MethodArgs, type MethodNames, type MethodResult } from './actor-class.ts';
export type { ActorBuilder } from './actor-builder.ts';
export type { JobSpec } from './job-session.ts';
export type { ActorCaller, ActorHandle, CallOptions } from './actor-handle.ts';
export type { ActorOptions, TaskOptions } from './actor-options.ts';
export type * from './cluster-info.types.ts';
export type { ClientPlacementGroupOptions } from './placement-group-options.ts';
export type { PlacementGroupOptions } from '../../lib/scheduling/bundles/request.ts';
export { GcsUnavailableError } from './errors.ts';
export { registerMemoryBroker } from './memory-registry.ts';
export { defineTask, type AnyFunction, type TaskFunction } from './task-function.ts';
export type { TaskBuilder } from './task-builder.ts';
export type { TaskRunOptions } from './task-options.ts';
export type { TaskResult } from './task-submitter.ts';
export { NoNodesError, TaskAbortedError, TaskArgumentError, TaskNodeDiedError, TaskQueueFullError, TaskWorkerDiedError } from './task-errors.ts';
export { ActorArgumentError } from './actor-builder.ts';
