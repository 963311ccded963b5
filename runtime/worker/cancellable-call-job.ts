// A call its caller can cancel: the mailbox job that runs it with a signal of its own, and the
// runtime context (CallContext) through which its method reads that signal.
import { OrreryError } from '../../lib/errors.ts';
import type { BusMsg } from '../bus/bus.ts';
import { CallJob } from './call-job.ts';
import type { RuntimeContext } from './context.ts';
import type { HostedActor } from './hosted-actor.ts';
import type { WorkerClusterSource } from './worker-cluster.ts';

/**
 * A call its caller can cancel (it came with a call id and a cancel key): it runs with a signal of
 * its own in its runtime context, and is kept in its actor's `cancellable` map until answered, where
 * a cancel_call finds it (ActorHost.onCancel).
 */
export class CancellableCallJob extends CallJob {
  #started = false;
  #dropped = false;
  /** Made when the method first reads its signal: an AbortController costs more than the rest of a call's work here. */
  #controller: AbortController | undefined;
  /** Why it was cancelled while running, if it was before anything read its signal. */
  #abortedWith: Error | undefined;

  constructor(actor: HostedActor, method: string, args: unknown[], msg: BusMsg, revive: WorkerClusterSource | undefined, readonly callId: string, readonly cancelKey: string) {
    super(actor, method, args, msg, revive);
  }

  override run(): Promise<void> | void {
    if (this.#dropped) return; // cancelled while it waited: answered then
    this.#started = true;
    return super.run();
  }

  protected override context(): RuntimeContext {
    return new CallContext(this.actor.context, this);
  }

  protected override answered(): void {
    this.actor.cancellable?.delete(this.callId);
  }

  /** The signal the running method sees (CallContext). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#abortedWith !== undefined) this.#controller.abort(this.#abortedWith);
    }
    return this.#controller.signal;
  }

  /** Its caller cancelled it: false when it had not started (answered ABORTED, it never will), true when its running method's signal aborted. */
  cancel(): boolean {
    const what = `${this.actor.className}.${this.method}`;
    const detail = { actorId: this.actor.actorId, method: this.method };
    if (!this.#started) {
      this.#dropped = true;
      this.fail(new OrreryError('ABORTED', `call ${what} was cancelled by its caller before it started; it did not run`, { detail }));
      return false;
    }
    this.#abortedWith ??= new OrreryError('ABORTED', `call ${what} was cancelled by its caller`, { detail });
    this.#controller?.abort(this.#abortedWith);
    return true;
  }
}

/**
 * A cancellable call's runtime context: its actor's, with the call's own signal, made only if the
 * method asks for it (getRuntimeContext() reads `signal`).
 */
class CallContext implements RuntimeContext {
  readonly nodeId: string;
  readonly nodeName: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly actorId: string | undefined;
  readonly jobId: string | undefined;
  readonly namespace: string | undefined;
  readonly cluster: RuntimeContext['cluster'];

  constructor(
    base: RuntimeContext,
    private readonly job: CancellableCallJob,
  ) {
    this.nodeId = base.nodeId;
    this.nodeName = base.nodeName;
    this.labels = base.labels;
    this.actorId = base.actorId;
    this.jobId = base.jobId;
    this.namespace = base.namespace;
    this.cluster = base.cluster;
  }

  get signal(): AbortSignal {
    return this.job.signal;
  }
}
