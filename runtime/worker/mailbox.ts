/**
 * One actor's mailbox: calls start in arrival order, at most `maxConcurrency` at a time (1 = strictly
 * one after another, each awaited before the next starts). An idle mailbox holds no arrays, so
 * thousands of idle actors cost little.
 */
export interface MailboxJob {
  /**
   * Runs the call and sends its answer. Returns a promise that resolves once it has finished, or
   * nothing when it finished before returning (a method that returned a plain value): the next
   * call then starts at once, without a trip through the microtask queue. Must not throw.
   */
  run(): Promise<void> | void;
  /** The mailbox closed before the job finished: answer with `err` now, and send nothing later. */
  abort(err: Error): void;
}

export class Mailbox {
  private queue: MailboxJob[] | undefined;
  private head = 0;
  private running: Set<MailboxJob> | undefined;
  /** The job push() is running right now on an idle mailbox, before any set is made for it. */
  private inline: MailboxJob | undefined;
  private closedWith: Error | undefined;

  constructor(readonly maxConcurrency: number) {}

  /** Calls waiting to start. */
  get waiting(): number {
    return this.queue === undefined ? 0 : this.queue.length - this.head;
  }

  /** Calls started and not yet finished. */
  get inFlight(): number {
    return (this.running?.size ?? 0) + (this.inline === undefined ? 0 : 1);
  }

  push(job: MailboxJob): void {
    if (this.closedWith !== undefined) return job.abort(this.closedWith);
    if (this.queue === undefined && this.inFlight === 0) return this.runIdle(job);
    (this.queue ??= []).push(job);
    this.pump();
  }

  /** Fails every waiting and running job with `err`; later pushes fail the same way. */
  close(err: Error): void {
    if (this.closedWith !== undefined) return;
    this.closedWith = err;
    const jobs = [...(this.inline === undefined ? [] : [this.inline]), ...(this.running ?? []), ...(this.queue?.slice(this.head) ?? [])];
    this.queue = undefined;
    this.running = undefined;
    this.head = 0;
    for (const job of jobs) job.abort(err);
  }

  /**
   * The common case — a call to an actor with nothing else to do — without the queue and the set:
   * a method that returns a plain value has finished when run() returns, and nothing is allocated
   * for it. A push made while it runs (from inside the method) waits in the queue as usual.
   */
  private runIdle(job: MailboxJob): void {
    this.inline = job;
    const done = job.run();
    this.inline = undefined;
    if (this.closedWith !== undefined) return; // close() ran inside it and aborted it
    if (done !== undefined) {
      (this.running ??= new Set()).add(job);
      done.then(() => this.finish(job));
    }
    if (this.queue !== undefined) this.pump();
  }

  private pump(): void {
    while (this.queue !== undefined && this.head < this.queue.length && this.inFlight < this.maxConcurrency) {
      const job = this.queue[this.head++];
      if (this.head === this.queue.length) {
        this.queue = undefined;
        this.head = 0;
      } else if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      const running = (this.running ??= new Set());
      running.add(job);
      const done = job.run();
      if (done === undefined) {
        // finished already; close() may have run inside it and dropped the set
        if (this.running === running && running.delete(job) && running.size === 0) this.running = undefined;
      } else {
        done.then(() => this.finish(job));
      }
    }
  }

  private finish(job: MailboxJob): void {
    if (this.running === undefined || !this.running.delete(job)) return;
    if (this.running.size === 0) this.running = undefined;
    this.pump();
  }
}
