import type { CreateActor } from '../../protocols/messages/actor.ts';
import type { Bus } from '../bus/bus.ts';
import { ActorHost, type HostNode } from '../worker/host.ts';

/**
 * What a raylet holds of one worker host, whether it runs in the raylet's own process (inline) or
 * in a forked child (worker-process.ts).
 */
export interface WorkerHost {
  /** The process the host's actors run in. */
  readonly pid: number;
  /** Resolves once the host has ended, with a one-line description (`signal SIGKILL`, `code 0`). */
  readonly exited: Promise<string>;
  /** Starts an actor; resolves once its constructor returned (errors as ActorHost.create). */
  create(spec: CreateActor): Promise<void>;
  /** Drops an actor; false when the host did not hold it. */
  kill(actorId: string): Promise<boolean>;
  /** Graceful: stops every actor and ends the host. */
  stop(): Promise<void>;
  /** Abrupt: ends the host now, as if it had died. */
  crash(): void;
}

/** An ActorHost on the raylet's own bus: the memory transport's worker host. */
export class InlineWorkerHost implements WorkerHost {
  readonly pid = process.pid;
  readonly exited: Promise<string>;
  private readonly host: ActorHost;
  private end!: (how: string) => void;

  constructor(opts: { bus: Bus; cluster: string; node: HostNode; log?: (line: string) => void }) {
    this.host = new ActorHost(opts);
    this.exited = new Promise((resolve) => (this.end = resolve));
  }

  create(spec: CreateActor): Promise<void> {
    return this.host.create(spec);
  }

  async kill(actorId: string): Promise<boolean> {
    return this.host.kill(actorId);
  }

  async stop(): Promise<void> {
    this.host.stop();
    this.end('stopped');
  }

  crash(): void {
    this.host.stop();
    this.end('crashed');
  }
}
