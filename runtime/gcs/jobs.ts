import { createHash, timingSafeEqual } from 'node:crypto';
import type { MessageBody } from '../../protocols/messages/registry.ts';
import type { JobEndReason, JobInfoWire, JobRegistered } from '../../protocols/messages/job.ts';
import { tokenField } from './wire.ts';
import { JobFinishedError, JobNotFoundError, JobNotOwnedError } from '../errors.ts';
import type { EventPublisher } from './events.ts';
import { Liveness, type LivenessClock } from './liveness.ts';
import type { GcsStore, JobRecord } from './store.ts';

/**
 * The job table (docs/jobs.md): every driver connection registers a job, heartbeats while it lives
 * and finishes it on close(). A job ends — FINISHED, with a reason — when its driver finishes it or
 * when no heartbeat came for `timeoutMs`; then `endOwned` kills the actors and removes the placement
 * groups it owned (not the detached ones), so their names are free again.
 *
 * Ownership of a job is its secret: register_job carries one the driver drew, the table keeps its
 * SHA-256, and job_heartbeat / finish_job count only with the same secret (JOB_NOT_OWNED otherwise,
 * counted by the wire intake). The hash is stored with the job, so a GCS that takes over from the
 * store still knows the owner.
 *
 * Timeouts never run while the GCS cannot judge them: windows start only once the GCS serves (after
 * a recovery's grace window, every RUNNING job gets a fresh `timeoutMs` from then); a timeout that
 * falls while the GCS's own connection is down ends nothing, and every job gets a fresh window when
 * the connection is back (as nodes do, liveness.ts).
 */
/**
 * 30 s. Tried at 8 s (so that a driver killed outright loses what it owns within 10 s without
 * configuration): in CI a driver whose nats-server crashed and came back after 1 s had its job
 * finished — it took longer than 8 s to beat again — and lost its actors. A NATS blip must not cost
 * a driver its job, so the default stays long; `--job-timeout-ms` shortens it where a quick cleanup
 * matters more (docs/jobs.md).
 */
export const DEFAULT_JOB_TIMEOUT_MS = 30_000;
/** Finished jobs kept listed; older ones are forgotten (from the store too). */
export const DEFAULT_MAX_FINISHED_JOBS = 10_000;

export interface JobDirectoryDeps {
  readonly store: GcsStore;
  readonly events: EventPublisher;
  readonly log: (line: string) => void;
  /** A job with no heartbeat for this long is FINISHED (heartbeat_timeout). */
  readonly timeoutMs: number;
  /** Kills the actors and removes the groups owned by these jobs; resolves once they are gone. */
  readonly endOwned: (jobIds: ReadonlySet<string>, cause: (jobId: string) => string) => Promise<{ actors: number; groups: number }>;
  readonly maxFinishedJobs?: number;
  readonly clock?: LivenessClock;
  /** ms since epoch; default Date.now. */
  readonly now?: () => number;
}

interface Entry {
  info: JobInfoWire;
  readonly secretHash: string;
  /** Resolves once the job's end (its owned actors and groups gone) is done. */
  ending?: Promise<void>;
}

export class JobDirectory {
  readonly #entries = new Map<string, Entry>();
  /** Finished job ids, oldest first (the retention bound forgets from the front). */
  readonly #finished: string[] = [];
  readonly #liveness: Liveness;
  #serving = false;
  #heard = true;

  constructor(private readonly deps: JobDirectoryDeps) {
    this.#liveness = new Liveness({ timeoutMs: deps.timeoutMs, expired: (jobId) => this.#expired(jobId), clock: deps.clock });
    const records = [...deps.store.jobs()].sort((a, b) => (a.info.jobId < b.info.jobId ? -1 : 1));
    for (const record of records) {
      this.#entries.set(record.info.jobId, { info: record.info, secretHash: record.secretHash });
      if (record.info.state === 'FINISHED') this.#finished.push(record.info.jobId);
    }
  }

  /** How often a driver heartbeats: six beats per timeout, at most every 5 s. */
  get heartbeatMs(): number {
    return Math.max(10, Math.min(5000, Math.floor(this.deps.timeoutMs / 6)));
  }

  /**
   * The GCS serves: every RUNNING job gets a fresh window from now, and the owned actors of jobs
   * that finished before a restart but were not all killed then are killed now.
   */
  serve(): Promise<void> {
    if (this.#serving) return Promise.resolve();
    this.#serving = true;
    for (const entry of this.#entries.values()) if (entry.info.state === 'RUNNING') this.#liveness.watch(entry.info.jobId);
    const finished = new Set(this.#finished);
    if (finished.size === 0) return Promise.resolve();
    return this.deps.endOwned(finished, (jobId) => causeOf(this.#entries.get(jobId)!.info)).then(() => undefined);
  }

  /** The GCS's connection to the bus went down or came back (nodes.ts does the same for nodes). */
  connectionChanged(status: 'disconnected' | 'reconnected' | string): void {
    if (status === 'disconnected') this.#heard = false;
    else if (status === 'reconnected') {
      this.#heard = true;
      this.#liveness.restartAll();
    }
  }

  register(body: MessageBody<'register_job'>): JobRegistered {
    tokenField('jobId', body.jobId);
    const existing = this.#entries.get(body.jobId);
    if (existing) {
      this.#own(existing, body.secret, 'register_job');
      if (existing.info.state === 'FINISHED') throw finishedError(existing.info);
      this.#liveness.beat(body.jobId);
      return this.#registered(existing.info);
    }
    const info: JobInfoWire = {
      jobId: body.jobId,
      state: 'RUNNING',
      host: body.host,
      pid: body.pid,
      namespace: body.namespace,
      startedAt: this.#now(),
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.entrypoint === undefined ? {} : { entrypoint: body.entrypoint }),
    };
    const entry: Entry = { info, secretHash: hashOf(body.secret) };
    this.#entries.set(info.jobId, entry);
    this.#put(entry);
    if (this.#serving) this.#liveness.watch(info.jobId);
    this.deps.events.job('job_started', info);
    return this.#registered(info);
  }

  heartbeat(body: MessageBody<'job_heartbeat'>): { state: 'RUNNING' } {
    const entry = this.#entries.get(body.jobId);
    if (!entry) throw new JobNotFoundError(body.jobId);
    this.#own(entry, body.secret, 'job_heartbeat');
    if (entry.info.state === 'FINISHED') throw finishedError(entry.info);
    this.#liveness.beat(body.jobId);
    return { state: 'RUNNING' };
  }

  /** finish_job: the job FINISHED (closed); answers once its owned actors and groups are gone. */
  async finish(body: MessageBody<'finish_job'>): Promise<JobInfoWire> {
    const entry = this.#entries.get(body.jobId);
    if (!entry) throw new JobNotFoundError(body.jobId);
    this.#own(entry, body.secret, 'finish_job');
    if (entry.info.state === 'RUNNING') this.#end(entry, 'closed', 'the driver closed its connection');
    await entry.ending;
    return entry.info;
  }

  /**
   * register_actor / create_pg name their job: it must be RUNNING here (JOB_FINISHED: the driver's
   * job already ended; JOB_NOT_FOUND: the GCS does not know it — a driver re-registers and retries).
   */
  checkRunning(jobId: string | undefined): void {
    if (jobId === undefined) return;
    const entry = this.#entries.get(jobId);
    if (!entry) throw new JobNotFoundError(jobId);
    if (entry.info.state === 'FINISHED') throw finishedError(entry.info);
  }

  list(): JobInfoWire[] {
    return [...this.#entries.values()].map((e) => e.info);
  }

  get(jobId: string): JobInfoWire | undefined {
    return this.#entries.get(jobId)?.info;
  }

  stop(): void {
    this.#liveness.stop();
  }

  #expired(jobId: string): void {
    const entry = this.#entries.get(jobId);
    if (!entry || entry.info.state !== 'RUNNING') return;
    // the GCS could not hear anyone: not the driver's fault; restartAll() gives it a new window
    if (!this.#heard) return;
    this.#end(entry, 'heartbeat_timeout', `no heartbeat from the driver for ${this.deps.timeoutMs} ms`);
  }

  #end(entry: Entry, reason: JobEndReason, message: string): void {
    this.#liveness.forget(entry.info.jobId);
    entry.info = { ...entry.info, state: 'FINISHED', endedAt: this.#now(), endReason: reason, endMessage: message };
    this.#put(entry);
    this.#finished.push(entry.info.jobId);
    const jobId = entry.info.jobId;
    entry.ending = this.deps.endOwned(new Set([jobId]), () => causeOf(entry.info)).then(
      ({ actors, groups }) => {
        if (actors + groups > 0) this.deps.log(`job ${jobId} finished (${reason}): ${actors} owned actor(s) killed, ${groups} owned placement group(s) removed`);
      },
      (err: unknown) => this.deps.log(`job ${jobId} finished (${reason}); ending what it owned failed: ${err instanceof Error ? err.message : String(err)}`),
    );
    this.deps.events.job('job_finished', entry.info);
    this.#forgetOldest();
  }

  #forgetOldest(): void {
    const max = this.deps.maxFinishedJobs ?? DEFAULT_MAX_FINISHED_JOBS;
    while (this.#finished.length > max) {
      const jobId = this.#finished.shift()!;
      this.#entries.delete(jobId);
      this.deps.store.deleteJob(jobId);
    }
  }

  #own(entry: Entry, secret: string, verb: string): void {
    const given = Buffer.from(hashOf(secret), 'hex');
    const known = Buffer.from(entry.secretHash, 'hex');
    if (given.length !== known.length || !timingSafeEqual(given, known)) throw new JobNotOwnedError(entry.info.jobId, verb);
  }

  #registered(job: JobInfoWire): JobRegistered {
    return { job, heartbeatMs: this.heartbeatMs, timeoutMs: this.deps.timeoutMs };
  }

  #put(entry: Entry): void {
    const record: JobRecord = { info: entry.info, secretHash: entry.secretHash };
    this.deps.store.putJob(record);
  }

  #now(): number {
    return (this.deps.now ?? Date.now)();
  }
}

function hashOf(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

function finishedError(info: JobInfoWire): JobFinishedError {
  return new JobFinishedError(info.jobId, info.endReason, info.endMessage);
}

/** The death cause of an owned actor, naming its job. */
export function causeOf(info: JobInfoWire): string {
  return `its job ${info.jobId} finished: ${info.endMessage ?? info.endReason ?? 'ended'}`;
}
