// One actor call as a job in its actor's mailbox: the method run in the actor's runtime context,
// and its answer sent exactly once, with the answers of the same turn (answers.ts).
import { encodeError, encodeOk } from '../../protocols/reply.ts';
import { plainDataProblem } from '../../protocols/plain-data.ts';
import type { BusMsg } from '../bus/bus.ts';
import { RemoteError } from '../errors.ts';
import { Answers } from './answers.ts';
import { runInContext, type RuntimeContext } from './context.ts';
import type { HostedActor } from './hosted-actor.ts';
import type { MailboxJob } from './mailbox.ts';
import { toRemoteError, unsendableResult } from './remote-error.ts';
import { replyBytes } from './respond.ts';
import type { WorkerClusterSource } from './worker-cluster.ts';

/** Shared by every actor of this process: msg.respond() answers on the connection each call came on. */
const answers = new Answers();

/** One call as a mailbox job: runs the method in the actor's context and answers exactly once. */
export class CallJob implements MailboxJob {
  #answered = false;

  constructor(
    protected readonly actor: HostedActor,
    protected readonly method: string,
    private args: unknown[],
    private readonly msg: BusMsg,
    /** Set when the arguments hold actor references to make handles of first. */
    private readonly revive?: WorkerClusterSource,
  ) {}

  run(): Promise<void> | void {
    const { revive } = this;
    if (revive === undefined) return this.invoke();
    const cluster = revive.loaded;
    if (cluster !== undefined) {
      this.args = cluster.revive(this.args) as unknown[];
      return this.invoke();
    }
    // the first handle this host receives loads its cluster; the mailbox waits for it
    return revive.get().then(
      (loaded) => {
        this.args = loaded.revive(this.args) as unknown[];
        return this.invoke();
      },
      (err: unknown) => this.fail(err),
    );
  }

  private invoke(): Promise<void> | void {
    const { actor, args } = this;
    let value: unknown;
    let thenable: boolean;
    try {
      const fn = methodOf(actor, this.method);
      value = runInContext(this.context(), () => fn.apply(actor.instance, args));
      thenable = isThenable(value); // inside the try: a `then` getter may throw
    } catch (err) {
      return this.fail(toRemoteError(err));
    }
    // A plain value is answered now; only a method that returned a promise (or thenable) is awaited.
    if (!thenable) return this.succeed(value);
    return Promise.resolve(value).then(
      (result) => this.succeed(result),
      (err: unknown) => this.fail(toRemoteError(err)),
    );
  }

  abort(err: Error): void {
    this.fail(err);
  }

  /** The runtime context the method runs in: its actor's. */
  protected context(): RuntimeContext {
    return this.actor.context;
  }

  /** The answer has been sent. */
  protected answered(): void {}

  private succeed(value: unknown): void {
    if (this.#answered) return;
    // what would arrive changed (a Map as an object, a class instance without its class) is refused
    const problem = plainDataProblem(value);
    if (problem) return this.fail(unsendableResult(`${this.actor.className}.${this.method}`, problem));
    this.#answered = true;
    this.answered();
    let data: Uint8Array;
    try {
      data = encodeOk(value);
    } catch (err) {
      data = encodeError(err); // a value msgpack cannot carry, a reply over the size limit
    }
    answers.send(this.msg, data);
  }

  protected fail(err: unknown): void {
    if (this.#answered) return;
    this.#answered = true;
    this.answered();
    answers.send(this.msg, replyBytes(() => encodeError(err)));
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

function methodOf(actor: HostedActor, method: string): (...args: unknown[]) => unknown {
  const fn: unknown = (actor.instance as Record<string, unknown>)[method];
  const inherited = (Object.prototype as unknown as Record<string, unknown>)[method];
  if (typeof fn !== 'function' || method === 'constructor' || fn === inherited) {
    throw new RemoteError({ name: 'TypeError', message: `${actor.className}.${method} is not a function` });
  }
  return fn as (...args: unknown[]) => unknown;
}
