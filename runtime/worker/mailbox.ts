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
  private closedWith: Error | undefined;

  constructor(readonly maxConcurrency: number) {}

  /** Calls waiting to start. */
  get waiting(): number {
    return this.queue === undefined ? 0 : this.queue.length - this.head;
  }

  /** Calls started and not yet finished. */
  get inFlight(): number {
    return this.running?.size ?? 0;
  }

  push(job: MailboxJob): void {
    if (this.closedWith !== undefined) return job.abort(this.closedWith);
    (this.queue ??= []).push(job);
    this.pump();
  }

  /** Fails every waiting and running job with `err`; later pushes fail the same way. */
  close(err: Error): void {
    if (this.closedWith !== undefined) return;
    this.closedWith = err;
    const jobs = [...(this.running ?? []), ...(this.queue?.slice(this.head) ?? [])];
    this.queue = undefined;
    this.running = undefined;
    this.head = 0;
    for (const job of jobs) job.abort(err);
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
