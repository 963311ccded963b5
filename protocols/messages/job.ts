import { literal, num, object, optional, str, type Infer } from '../validate.ts';
import { id } from './common.ts';
import { pageFields } from './page.ts';

/**
 * Jobs on the wire (docs/jobs.md). Every driver connection (`connect()`) is a job: it registers with
 * the GCS, heartbeats while it lives, and finishes on close(). Actors and placement groups it
 * creates are owned by it unless created with `lifetime: 'detached'`; when the job finishes — closed,
 * or its heartbeats stopped for the GCS's job timeout — the GCS kills its owned actors and removes
 * its owned groups.
 *
 *   driver → GCS   register_job, job_heartbeat, finish_job (each with the job's secret)
 *   anyone → GCS   list_jobs (a page, protocols/messages/page.ts)
 *
 * The driver draws the job id and a secret when it connects; only a request carrying that secret
 * may heartbeat or finish the job (JOB_NOT_OWNED otherwise). The GCS keeps a SHA-256 hash of the
 * secret in its job record, never the secret, so a GCS that takes over from its store still knows
 * who owns each job.
 */
export const JOB_STATES = ['RUNNING', 'FINISHED'] as const;
export type JobState = (typeof JOB_STATES)[number];

/** Why a job finished: its driver closed, or the GCS stopped hearing its heartbeats. */
export const JOB_END_REASONS = ['closed', 'heartbeat_timeout'] as const;
export type JobEndReason = (typeof JOB_END_REASONS)[number];

/** JobInfo of API.md (times in ms since epoch). */
export const jobInfo = object({
  jobId: id,
  state: literal(...JOB_STATES),
  /** The driver's host name and process id. */
  host: str({ min: 1, max: 256 }),
  pid: num({ int: true, min: 0 }),
  /** The connection's default namespace. */
  namespace: str({ min: 1, max: 256 }),
  startedAt: num({ min: 0 }),
  endedAt: optional(num({ min: 0 })),
  /** A name the driver gave its job (`connect({ job: { name } })`). */
  name: optional(str({ min: 1, max: 256 })),
  /** The driver's command line, shortened. */
  entrypoint: optional(str({ max: 1024 })),
  endReason: optional(literal(...JOB_END_REASONS)),
  /** Once FINISHED: what happened, in words (how many owned actors and groups went with it). */
  endMessage: optional(str({ max: 4096 })),
});
export type JobInfoWire = Infer<typeof jobInfo>;

/** Secrets are drawn by the driver: 32 random bytes, hex. */
const secret = str({ min: 32, max: 128 });

/**
 * driver → GCS (`gcs.register_job`). Registering an id the GCS already holds with the same secret
 * answers the job as it is (a retry, or a GCS that lost its tables); with another secret it is
 * JOB_NOT_OWNED; a FINISHED job is JOB_FINISHED.
 */
export const registerJob = object({
  jobId: id,
  secret,
  host: str({ min: 1, max: 256 }),
  pid: num({ int: true, min: 0 }),
  namespace: str({ min: 1, max: 256 }),
  name: optional(str({ min: 1, max: 256 })),
  entrypoint: optional(str({ max: 1024 })),
});
export type RegisterJob = Infer<typeof registerJob>;

/** The answer to register_job: the job, and how often to heartbeat (the GCS's timeout is several beats). */
export const jobRegistered = object({
  job: jobInfo,
  heartbeatMs: num({ int: true, min: 10 }),
  timeoutMs: num({ int: true, min: 1 }),
});
export type JobRegistered = Infer<typeof jobRegistered>;

/** driver → GCS (`gcs.job_heartbeat`): the job lives. JOB_FINISHED when the GCS already ended it. */
export const jobHeartbeat = object({ jobId: id, secret });

/** driver → GCS (`gcs.finish_job`): the driver is done; the answer (the job, FINISHED) comes once its owned actors are dead. */
export const finishJob = object({ jobId: id, secret });

/** anyone → GCS (`gcs.list_jobs`): one page of the job table, in id order (ids sort by start time). */
export const listJobs = object(pageFields);
