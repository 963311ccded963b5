import type { Bus } from '../bus/bus.ts';
import type { ClusterClient } from '../client/cluster.ts';
import type { JobOwner } from '../client/job-session.ts';
import { currentContext } from './context.ts';

/**
 * The cluster of a worker host (issue 15, part 2): what `connect()` with no arguments returns inside
 * an actor or a task, and what turns an actor reference that arrives in a payload into a working
 * handle. One per host process, on the host's own NATS connection — no second connection, no
 * second set of credentials. It is a ClusterClient like a driver's, with two differences:
 *
 *   - it is not a job of its own: what it creates is owned by the job of the actor or task running
 *     at that moment (read from the runtime context; a detached actor's creations are owned by
 *     nobody), and its default namespace is theirs;
 *   - close() does nothing, since every actor and task of the host shares it.
 *
 * The client (and rxjs with it) is loaded the first time something asks for it, so a host whose
 * actors never use it does not carry it (spec/runtime/process-graphs.spec.ts).
 *
 * connect() finds it in the runtime context of the actor or task running now (context.ts, kept on
 * globalThis: user code may import orrery from another copy than the host runs from) — so hosts
 * inside one process (the memory transport's, several raylets beside a driver) each have their own —
 * and, in a host process, outside any actor too (installWorkerCluster).
 */
export interface WorkerClusterSource {
  /** The cluster, once it has been loaded; undefined before. */
  readonly loaded: ClusterClient | undefined;
  /** Loads it (once) and returns it. */
  get(): Promise<ClusterClient>;
}

const KEY = Symbol.for('orrery.workerCluster');
type Holder = { [KEY]?: WorkerClusterSource };

/** The source installed in this process, if it is a worker host. */
export function workerClusterSource(): WorkerClusterSource | undefined {
  return (globalThis as Holder)[KEY];
}

/** The owner of a creation made inside an actor or task: the job in its runtime context. */
const contextOwner: JobOwner = {
  get jobId() {
    return currentContext()?.jobId;
  },
  finished: undefined,
  run: (create) => create(currentContext()?.jobId),
  close: async () => undefined,
};

/** A worker host's cluster on its bus, loaded on first use. */
export function workerCluster(opts: { bus: Bus; cluster: string; address: string; requestTimeoutMs?: number; callTimeoutMs?: number }): WorkerClusterSource {
  let loaded: ClusterClient | undefined;
  let loading: Promise<ClusterClient> | undefined;
  const source: WorkerClusterSource = {
    get loaded() {
      return loaded;
    },
    get: () =>
      (loading ??= import('../client/cluster.ts').then(async ({ ClusterClient }) => {
        loaded = await ClusterClient.open(opts.bus, {
          address: opts.address,
          cluster: opts.cluster,
          namespace: 'default',
          requestTimeoutMs: opts.requestTimeoutMs ?? 10_000,
          callTimeoutMs: opts.callTimeoutMs ?? 60_000,
          ownsBus: false,
          borrowed: { owner: contextOwner, namespace: () => currentContext()?.namespace ?? 'default' },
        });
        return loaded;
      })),
  };
  return source;
}

/** The worker cluster of this host process (one host per process): also found outside any actor. */
export function installWorkerCluster(opts: Parameters<typeof workerCluster>[0]): WorkerClusterSource {
  const source = workerCluster(opts);
  (globalThis as Holder)[KEY] = source;
  return source;
}
