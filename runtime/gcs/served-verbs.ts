import type { Bus, Subscription } from '../bus/bus.ts';
import type { JobDirectory } from './jobs.ts';
import type { NodeDirectory } from './nodes.ts';

/**
 * The GCS's request subjects, as the Gcs machine opens and closes them (gcs.machine.ts,
 * openSubjects and closeSubjects): every verb subscribed (routes.ts, serveVerbs), and the bus's
 * connection watched while they are, so that the node and job tables hear when it drops and when
 * it comes back.
 */
export interface ServedVerbsDeps {
  readonly bus: Pick<Bus, 'onStatus' | 'flush'>;
  /** Subscribes every verb (routes.ts, serveVerbs). */
  readonly serve: () => Subscription[];
  readonly nodes: Pick<NodeDirectory, 'connectionChanged'>;
  readonly jobs: Pick<JobDirectory, 'connectionChanged'>;
}

export class ServedVerbs {
  #subscriptions: Subscription[] = [];
  #stopWatchingBus: (() => void) | undefined;

  constructor(private readonly deps: ServedVerbsDeps) {}

  /** Subscribes every verb and watches the bus; resolves once the server has the subscriptions. */
  async open(): Promise<void> {
    const { bus, nodes, jobs } = this.deps;
    this.#subscriptions = this.deps.serve();
    this.#stopWatchingBus = bus.onStatus((status, cause) => {
      nodes.connectionChanged(status, cause);
      jobs.connectionChanged(status);
    });
    await bus.flush();
  }

  /** Unsubscribes every verb and stops watching the bus. */
  close(): void {
    for (const sub of this.#subscriptions) sub.unsubscribe();
    this.#subscriptions = [];
    this.#stopWatchingBus?.();
  }
}
