// An actor as its worker host holds it, and how one starts: its class imported from its module URL,
// its runtime context made, its constructor run. ActorHost (host.ts) decides when, and subscribes it.
import { containsRef } from '../../protocols/actor-ref.ts';
import type { CodeSourcePolicy } from '../../protocols/code-source.ts';
import type { HostNode } from '../../protocols/ipc.ts';
import type { CreateActor } from '../../protocols/messages/actor.ts';
import type { Subscription } from '../bus/bus.ts';
import { ActorDiedError } from '../errors.ts';
import type { CancellableCallJob } from './cancellable-call-job.ts';
import { NEVER_ABORTED, runInContext, type RuntimeContext } from './context.ts';
import { loadActorClass } from './load.ts';
import { Mailbox } from './mailbox.ts';
import { toRemoteError } from './remote-error.ts';
import type { WorkerClusterSource } from './worker-cluster.ts';

export interface HostedActor {
  readonly actorId: string;
  readonly className: string;
  readonly incarnation: number;
  readonly instance: object;
  readonly context: RuntimeContext;
  readonly mailbox: Mailbox;
  sub?: Subscription;
  /** Its calls that can be cancelled (sent with a cancel key) and are not answered yet, by call id; made at the first. */
  cancellable: Map<string, CancellableCallJob> | undefined;
}

export interface ActorStartOptions {
  node: HostNode;
  codeSources: CodeSourcePolicy;
  /** Turns actor references in the constructor's arguments into handles; without it they stay references. */
  workerCluster: WorkerClusterSource | undefined;
  /** Whether the actor was killed, or its host stopped, since its create began: asked before and after its constructor runs. */
  isKilled: () => boolean;
  /** Takes the constructed actor in, in the same turn as its constructor returned. */
  onStarted: (actor: HostedActor) => void;
}

/**
 * Starts an actor and hands it to `onStarted`. Rejects with what loadActorClass rejects with,
 * RemoteError (the constructor threw) or ActorDiedError (killed before it finished starting).
 */
export async function startActor(spec: CreateActor, opts: ActorStartOptions): Promise<void> {
  const { workerCluster, isKilled } = opts;
  const cls = await loadActorClass(spec.code.moduleUrl, spec.code.className, opts.codeSources);
  // Named fields, not `{ ...node, actorId }`: V8 gave each spread copy of the node a hidden
  // class of its own (~0.5 KB per actor in a host with 2,500; heap snapshot), this one shape is shared.
  const { nodeId, nodeName, labels } = opts.node;
  const context: RuntimeContext = { nodeId, nodeName, labels, actorId: spec.actorId, jobId: spec.jobId, namespace: spec.namespace, cluster: workerCluster, signal: NEVER_ABORTED };
  // handles passed to the constructor arrive as references: handles on this host's connection
  const args = workerCluster !== undefined && containsRef(spec.code.args) ? ((await workerCluster.get()).revive(spec.code.args) as unknown[]) : spec.code.args;
  if (isKilled()) throw new ActorDiedError(spec.actorId, 'killed while starting');
  let instance: object;
  try {
    instance = runInContext(context, () => new cls(...args));
  } catch (err) {
    throw toRemoteError(err);
  }
  if (isKilled()) throw new ActorDiedError(spec.actorId, 'killed while starting');
  opts.onStarted({
    actorId: spec.actorId,
    className: spec.code.className,
    incarnation: spec.incarnation,
    instance,
    context,
    mailbox: new Mailbox(spec.maxConcurrency),
    cancellable: undefined,
  });
}
