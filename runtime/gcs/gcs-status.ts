// What the GCS says of its own state (gcs_status), and the grace window's times that it and the
// service's start() count from.
import { performance } from 'node:perf_hooks';
import type { GcsStatusWire } from '../../protocols/messages/cluster.ts';
import type { GcsSnapshot } from './gcs.machine.ts';
import type { Recovery } from './recovery.ts';

/** When the grace window of a recovering GCS began and ended, and why it ended (recovering only). */
export class GraceWindow {
  #from: number | undefined;
  #ended: { at: number; by: string } | undefined;

  /** When the grace window began: gcs_status counts what is left of it from here. */
  get from(): number | undefined {
    return this.#from;
  }

  /** When and why the grace window ended: what `start()` times serving from. */
  get ended(): { at: number; by: string } | undefined {
    return this.#ended;
  }

  /** The Gcs machine waits in `recovering.grace`; only the first call counts. */
  began(): void {
    this.#from ??= performance.now();
  }

  /** The window ended, early or when it ran out; only the first call counts. */
  end(by: string): void {
    this.#ended ??= { at: performance.now(), by };
  }
}

export interface GcsStatusInput {
  /** The leader epoch this GCS holds (leader.ts); 0 without a lease. */
  readonly epoch: number;
  readonly snapshot: GcsSnapshot;
  readonly recovery: Pick<Recovery, 'expected' | 'nodesBack'>;
  readonly grace: GraceWindow;
}

/**
 * gcs_status: what this GCS is doing now — answered at once, so `orrery status` and the dashboard
 * can say a GCS is recovering (and for how long at most) while the reads they need wait for it.
 */
export function gcsStatus({ epoch, snapshot, recovery, grace }: GcsStatusInput): GcsStatusWire {
  if (snapshot.matches('recovering')) {
    const waiting = snapshot.matches({ recovering: 'grace' });
    const elapsed = grace.from === undefined ? 0 : performance.now() - grace.from;
    return {
      epoch,
      state: 'RECOVERING',
      recovering: {
        phase: waiting ? 'WAITING' : 'RECONCILING',
        nodesExpected: recovery.expected.size,
        nodesBack: recovery.nodesBack,
        graceLeftMs: waiting ? Math.max(0, Math.round(snapshot.context.graceMs - elapsed)) : 0,
      },
    };
  }
  return { epoch, state: snapshot.value === 'serving' ? 'SERVING' : 'STOPPING' };
}
