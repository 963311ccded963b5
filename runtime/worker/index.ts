// runtime/worker — worker hosts: load actor classes and task functions by module URL, run each
// actor's calls through its mailbox, and run tasks. runtime/worker/main.ts is the process entry a
// raylet forks.
export { getRuntimeContext, runInContext, type RuntimeContext } from './context.ts';
export { ActorHost, type ActorHostOptions, type HostNode } from './host.ts';
export { loadActorClass, loadTaskFunction, type ActorClass, type TaskFunctionImpl } from './load.ts';
export { plainDataProblem, type PlainDataProblem } from '../../protocols/plain-data.ts';
export { TaskRunner, type RunTask } from './task-runner.ts';
export { Mailbox, type MailboxJob } from './mailbox.ts';
export type { HostToRaylet, RayletToHost } from '../../protocols/ipc.ts';
