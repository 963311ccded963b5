import type { CreateActor } from '../../../protocols/messages/actor.ts';
import type { WorkerHost } from '../../../runtime/raylet/worker-host.ts';
import type { HostLease } from '../../../protocols/ipc.ts';
import type { RunTask } from '../../../runtime/worker/task-runner.ts';

/** A scripted worker host: records what it was asked, dies when the spec says so. */
export class FakeHost implements WorkerHost {
  static nextPid = 1000;
  readonly pid = FakeHost.nextPid++;
  readonly exited: Promise<string>;
  readonly actors = new Set<string>();
  stopped = false;
  failCreate: Error | undefined;
  /** Every task it was asked to run. */
  readonly tasks: RunTask[] = [];
  /** When set, tasks end only when it resolves. */
  taskGate: Promise<void> | undefined;
  private readonly running = new Set<(err: Error) => void>();
  private end!: (how: string) => void;

  constructor() {
    this.exited = new Promise((resolve) => (this.end = resolve));
    void this.exited.then((how) => {
      for (const reject of this.running) reject(new Error(`host exited (${how})`));
      this.running.clear();
    });
  }

  readonly revoked: string[] = [];
  /** Every fence lease it was sent. */
  readonly leases: HostLease[] = [];

  lease(lease: HostLease): void {
    this.leases.push(lease);
  }

  cancelTasks(): void {}

  revokeLeases(leaseIds: readonly string[]): void {
    this.revoked.push(...leaseIds);
  }

  runTask(task: RunTask): Promise<void> {
    this.tasks.push(task);
    return new Promise<void>((resolve, reject) => {
      this.running.add(reject);
      void (this.taskGate ?? Promise.resolve()).then(() => {
        this.running.delete(reject);
        resolve();
      });
    });
  }

  /** When set, create waits for it before answering. */
  gate: Promise<void> | undefined;

  /** How many creates it was asked for (constructors it would have run). */
  creates = 0;

  async create(spec: CreateActor): Promise<void> {
    this.creates++;
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

