import type { CreateActor } from '../../../protocols/messages/actor.ts';
import type { WorkerHost } from '../../../runtime/raylet/worker-host.ts';

/** A scripted worker host: records what it was asked, dies when the spec says so. */
export class FakeHost implements WorkerHost {
  static nextPid = 1000;
  readonly pid = FakeHost.nextPid++;
  readonly exited: Promise<string>;
  readonly actors = new Set<string>();
  stopped = false;
  failCreate: Error | undefined;
  private end!: (how: string) => void;

  constructor() {
    this.exited = new Promise((resolve) => (this.end = resolve));
  }

  /** When set, create waits for it before answering. */
  gate: Promise<void> | undefined;

  async create(spec: CreateActor): Promise<void> {
    if (this.gate) await this.gate;
    if (this.failCreate) throw this.failCreate;
    this.actors.add(spec.actorId);
  }

  async kill(actorId: string): Promise<boolean> {
    return this.actors.delete(actorId);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.end('code 0');
  }

  crash(): void {
    this.end('signal SIGKILL');
  }

  die(how: string): void {
    this.end(how);
  }
}

