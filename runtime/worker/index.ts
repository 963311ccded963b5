// runtime/worker — worker hosts: load actor classes by module URL and run each actor's calls
// through its mailbox. runtime/worker/main.ts is the process entry a raylet forks.
export { getRuntimeContext, runInContext, type RuntimeContext } from './context.ts';
export { ActorHost, type ActorHostOptions, type HostNode } from './host.ts';
export { loadActorClass, type ActorClass } from './load.ts';
export { Mailbox, type MailboxJob } from './mailbox.ts';
export type { HostToRaylet, RayletToHost } from './ipc.ts';
