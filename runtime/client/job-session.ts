import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { basename } from 'node:path';
import { OrreryError } from '../../lib/errors.ts';
import { jobInfo, jobRegistered } from '../../protocols/messages/job.ts';
import { object } from '../../protocols/validate.ts';
import { JobFinishedError, JobNotFoundError } from '../errors.ts';
import type { GcsClient } from './gcs-client.ts';

/**
 * A driver connection's job (docs/jobs.md): registered with the GCS when the connection opens, kept
 * alive by a heartbeat, finished on close(). What the connection creates is registered under the
 * job's id, so the GCS kills it when the job ends (unless `lifetime: 'detached'`).
 *
 * Registration starts at connect() but connect() does not wait for it: a connection to a server
 * whose GCS is not up yet still opens, and the first creation waits for the job (registering it
 * then if it could not be before). The heartbeat is one request per beat, never retried: the next
 * beat is the retry. When the GCS answers a beat with JOB_FINISHED (the driver was frozen past the
 * job timeout, or cut off), the connection is finished for good: creations and calls fail with
 * that JobFinishedError. When it answers JOB_NOT_FOUND (a GCS that kept no tables restarted), the
 * job registers again under the same id and secret.
 */
export interface JobSpec {
  /** A name for the job, shown by `orrery list jobs`. */
  name?: string;
}

/** A fresh job id: the start time in hex then 8 random hex characters, so ids sort by start time. */
export function newJobId(now = Date.now()): string {
  return now.toString(16).padStart(12, '0') + randomBytes(4).toString('hex');
}

/**
 * Who owns what a connection creates: a driver's own job (JobSession), or — for the cluster of a
 * worker host (runtime/worker/worker-cluster.ts) — the job of the actor or task running now.
 */
export interface JobOwner {
  /** The job creations are registered under now; undefined: owned by nobody. */
  readonly jobId: string | undefined;
  /** The error every creation and call fails with once the GCS finished the job. */
  readonly finished: Error | undefined;
  /** Runs a creation under the job (see JobSession.run). */
  run<T>(create: (jobId: string | undefined) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The heartbeat's answer carries nothing the driver needs. */
const STATE = object({});

export class JobSession implements JobOwner {
  readonly jobId = newJobId();
  readonly #secret = randomBytes(32).toString('hex');
  #registering: Promise<void> | undefined;
  #registered = false;
  #timer: NodeJS.Timeout | undefined;
  #beatMs = 0;
  #beating = false;
  #finished: JobFinishedError | undefined;
  /** The credentials may not register jobs (an observer's): the connection creates nothing owned. */
  #disabled = false;
  #closed = false;

  constructor(
    private readonly gcs: GcsClient,
    private readonly opts: { namespace: string; name?: string },
  ) {}

  /** The error every creation and call fails with once the GCS finished this job. */
  get finished(): JobFinishedError | undefined {
    return this.#finished;
  }

  /** Starts registering (not awaited: see above). */
  start(): void {
    this.#registering = this.#register().catch(() => undefined);
  }

  /**
   * The job id to create things under, once the job is registered (registering it again when an
   * earlier attempt failed); undefined when these credentials may not register jobs.
   */
  async ownerId(): Promise<string | undefined> {
    if (this.#finished) throw this.#finished;
    if (this.#disabled) return undefined;
    if (!this.#registered) {
      await this.#registering;
      if (!this.#registered && !this.#disabled && !this.#finished) await (this.#registering = this.#register());
    }
    if (this.#finished) throw this.#finished;
    return this.#disabled ? undefined : this.jobId;
  }

  /**
   * Runs a creation under the job: a JOB_NOT_FOUND answer registers the job again and runs it once
   * more; a JOB_FINISHED answer finishes the connection.
   */
  async run<T>(create: (jobId: string | undefined) => Promise<T>): Promise<T> {
    const jobId = await this.ownerId();
    try {
      return await create(jobId);
    } catch (err) {
      if (err instanceof JobFinishedError) this.#finish(err);
      if (!(err instanceof JobNotFoundError) || jobId === undefined) throw err;
      this.#registered = false;
      return create(await this.ownerId());
    }
  }

  /** Finishes the job (its owned actors and groups are gone when this resolves); never throws. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopBeating();
    await this.#registering;
    if (!this.#registered || this.#finished) return;
    try {
      await this.gcs.requestOnce('finish_job', { jobId: this.jobId, secret: this.#secret }, jobInfo);
    } catch {
      // the GCS is away: the job ends when its heartbeats have stopped for the GCS's timeout
    }
  }

  async #register(): Promise<void> {
    if (this.#closed) return;
    try {
      const reply = await this.gcs.request(
        'register_job',
        {
          jobId: this.jobId,
          secret: this.#secret,
          host: hostname() || 'unknown',
          pid: process.pid,
          namespace: this.opts.namespace,
          ...(this.opts.name === undefined ? {} : { name: this.opts.name }),
          entrypoint: entrypoint(),
        },
        jobRegistered,
      );
      this.#registered = true;
      if (this.#closed) return;
      this.#startBeating(reply.heartbeatMs);
    } catch (err) {
      if (err instanceof JobFinishedError) this.#finish(err);
      else if (err instanceof OrreryError && err.code === 'PERMISSION_DENIED') this.#disabled = true;
      else throw err;
    }
  }

  #startBeating(ms: number): void {
    this.#stopBeating();
    this.#beatMs = ms;
    this.#timer = setInterval(() => void this.#beat(), ms);
    // the heartbeat alone never keeps a driver's process alive
    this.#timer.unref();
  }

  #stopBeating(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  async #beat(): Promise<void> {
    if (this.#beating || this.#closed) return;
    this.#beating = true;
    try {
      // a beat waits no longer than the next one: a standby GCS that does not answer yet must not
      // hold the beats up past the job timeout once it leads
      await this.gcs.requestOnce('job_heartbeat', { jobId: this.jobId, secret: this.#secret }, STATE, this.#beatMs);
    } catch (err) {
      if (err instanceof JobFinishedError) this.#finish(err);
      else if (err instanceof JobNotFoundError) {
        this.#registered = false;
        this.#registering = this.#register().catch(() => undefined);
      }
      // anything else (no GCS for a moment, a timeout): the next beat tries again
    } finally {
      this.#beating = false;
    }
  }

  #finish(err: JobFinishedError): void {
    this.#finished ??= err;
    this.#stopBeating();
  }
}

/** What `orrery list jobs` shows as the job's entrypoint: the script and its arguments, shortened. */
function entrypoint(): string {
  const [script, ...args] = process.argv.slice(1);
  const text = [script === undefined ? basename(process.argv0) : basename(script), ...args].join(' ');
  return text.length > 1024 ? `${text.slice(0, 1021)}...` : text;
}

