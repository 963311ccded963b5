import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { basename, extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { OrreryError } from '../../lib/errors.ts';
import { jobInfo, jobRegistered } from '../../protocols/messages/job.ts';
import { object } from '../../protocols/validate.ts';
import { JobFinishedError, JobNotFoundError } from '../errors.ts';
import type { TlsFiles } from '../bus/nats-connect.ts';
import type { GcsClient } from './gcs-client.ts';
import type { BeatThreadData, BeatThreadMessage } from './job-beat-thread.ts';

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
 *
 * Where the heartbeat runs. On NATS, in a worker thread of its own with its own connection
 * (job-beat-thread.ts): a driver whose main thread is busy — a long synchronous computation, a
 * debugger stopped at a breakpoint — keeps its job, as a Ray driver does (its core worker beats from
 * a thread of its own). Before, the beat ran on the driver's event loop, and a driver held longer
 * than the job timeout (30 s by default) lost every actor and group it owned. A process that stops
 * as a whole (SIGSTOP, SIGKILL, a crash, exit) stops its thread too, and its job ends by timeout as
 * before. The thread starts one beat period after registration, so a short script never pays for
 * it, and the loop beats until it is connected. `job: { heartbeat: 'loop' }` keeps the beat on the
 * event loop (a driver stuck in an endless loop then loses its job; with the thread it keeps it, as
 * it keeps its connection); the memory transport always beats on the loop (its GCS shares that
 * loop), and so does a driver whose thread could not connect.
 */
export interface JobSpec {
  /** A name for the job, shown by `orrery list jobs`. */
  name?: string;
  /** Where the job's heartbeat runs (above): 'thread' (the default on NATS) or 'loop'. */
  heartbeat?: 'thread' | 'loop';
}

/** How a heartbeat thread reaches the cluster: what the driver's own connection was opened with. */
export interface BeatConnection {
  servers: string;
  creds?: string;
  tls?: TlsFiles;
  connectTimeoutMs?: number;
}

/** The thread's module beside this one: `.ts` in the source tree (under tsx), `.js` in dist/. */
const BEAT_THREAD = new URL(`./job-beat-thread${extname(fileURLToPath(import.meta.url))}`, import.meta.url);
/** The heartbeat thread. In the source tree under tsx it registers tsx first: a worker thread does not inherit the loader's hooks on Node.js 20. */
function beatThread(workerData: BeatThreadData, name: string): Worker {
  if (!BEAT_THREAD.pathname.endsWith('.ts')) return new Worker(BEAT_THREAD, { workerData, name });
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(BEAT_THREAD.href)}); })`;
  return new Worker(boot, { eval: true, workerData, name });
}

/** A stopped thread that has not ended by then is terminated. */
const THREAD_STOP_MS = 2_000;

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
  /** The heartbeat thread, while it beats (above). */
  #worker: Worker | undefined;
  /** Starts the thread one beat after the first registration. */
  #threadStart: NodeJS.Timeout | undefined;
  #registeringAgain = false;
  /** A thread could not start or connect: this session beats on its loop from then on. */
  #threadFailed = false;
  #beatMs = 0;
  #beating = false;
  #finished: JobFinishedError | undefined;
  /** The credentials may not register jobs (an observer's): the connection creates nothing owned. */
  #disabled = false;
  #closed = false;

  constructor(
    private readonly gcs: GcsClient,
    private readonly opts: { namespace: string; name?: string; heartbeat?: 'thread' | 'loop'; thread?: BeatConnection },
  ) {}

  /** Where the heartbeat runs now: 'loop' (also while a thread starts), 'thread', or undefined while nothing beats. */
  get heartbeat(): 'thread' | 'loop' | undefined {
    return this.#timer !== undefined ? 'loop' : this.#worker !== undefined ? 'thread' : undefined;
  }

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
    if ((this.#worker !== undefined || this.#threadStart !== undefined) && ms === this.#beatMs) return; // registered again: the thread beats on
    this.#stopBeating();
    this.#beatMs = ms;
    // the loop beats until a thread is connected and beating (starting one takes a moment)
    this.#timer = setInterval(() => void this.#beat(), ms);
    // the heartbeat alone never keeps a driver's process alive
    this.#timer.unref();
    const thread = this.opts.thread;
    if (thread === undefined || (this.opts.heartbeat ?? 'thread') !== 'thread' || this.#threadFailed) return;
    // after one beat on the loop: a driver done sooner (a script, a CLI-like tool) never pays for a thread
    this.#threadStart = setTimeout(() => {
      this.#threadStart = undefined;
      if (!this.#closed && this.#finished === undefined) this.#startThread(thread, ms);
    }, ms);
    this.#threadStart.unref();
  }

  #startThread(connection: BeatConnection, ms: number): void {
    const { subject, data } = this.gcs.prepared('job_heartbeat', { jobId: this.jobId, secret: this.#secret });
    const workerData: BeatThreadData = { ...connection, subject, body: data, beatMs: ms };
    let worker: Worker;
    try {
      worker = beatThread(workerData, `orrery job ${this.jobId} heartbeat`);
    } catch {
      return this.#threadGone(undefined, ms);
    }
    // nor does the thread
    worker.unref();
    this.#worker = worker;
    worker.on('message', (m: BeatThreadMessage) => {
      if (this.#worker !== worker) return;
      if (m.type === 'answer') {
        try {
          this.gcs.read(m.data, STATE);
        } catch (err) {
          this.#beatFailed(err);
        }
      } else if (m.type === 'ready') {
        // the thread beats from now on
        clearInterval(this.#timer);
        this.#timer = undefined;
      } else if (m.type === 'failed') this.#threadGone(worker, ms);
      // 'error' (no GCS for a moment, a timeout): the next beat tries again
    });
    worker.on('error', () => this.#threadGone(worker, ms));
    worker.on('exit', () => this.#threadGone(worker, ms));
  }

  /** The thread could not start, connect, or ended on its own: beat on the loop from now on. */
  #threadGone(worker: Worker | undefined, ms: number): void {
    if (worker !== undefined && this.#worker !== worker) return; // stopped on purpose
    this.#worker = undefined;
    this.#threadFailed = true;
    if (this.#closed || this.#finished !== undefined || this.#timer !== undefined) return;
    this.#timer = setInterval(() => void this.#beat(), ms);
    this.#timer.unref();
  }

  #stopBeating(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    clearTimeout(this.#threadStart);
    this.#threadStart = undefined;
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker !== undefined) {
      worker.postMessage({ type: 'stop' });
      setTimeout(() => void worker.terminate(), THREAD_STOP_MS).unref();
    }
  }

  async #beat(): Promise<void> {
    if (this.#beating || this.#closed) return;
    this.#beating = true;
    try {
      // a beat waits no longer than the next one: a standby GCS that does not answer yet must not
      // hold the beats up past the job timeout once it leads
      await this.gcs.requestOnce('job_heartbeat', { jobId: this.jobId, secret: this.#secret }, STATE, this.#beatMs);
    } catch (err) {
      this.#beatFailed(err);
    } finally {
      this.#beating = false;
    }
  }

  /** A beat's failure, from the loop or the thread. */
  #beatFailed(err: unknown): void {
    if (err instanceof JobFinishedError) this.#finish(err);
    else if (err instanceof JobNotFoundError) {
      if (this.#registeringAgain) return; // the thread's next answer may come before the registration's
      this.#registered = false;
      this.#registeringAgain = true;
      this.#registering = this.#register()
        .catch(() => undefined)
        .finally(() => (this.#registeringAgain = false));
    }
    // anything else (no GCS for a moment, a timeout): the next beat tries again
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

