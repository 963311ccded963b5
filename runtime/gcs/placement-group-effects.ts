import type { BundleClient, BundleOutcome } from './bundle-client.ts';
import type { BundleCancels } from './bundle-cancels.ts';
import type { BundleLedger } from './bundle-ledger.ts';
import type { EventPublisher } from './events.ts';
import type { PlacementGroupContext } from './placement-group.machine.ts';
import type { GroupEffect } from './placement-group.step.ts';
import type { GroupTable } from './placement-group-table.ts';

/**
 * What the PlacementGroup machine's effects do (placement-group.machine.ts; run by
 * placement-group.runner.ts for the directory, placement-groups.ts): reserving and committing in the
 * cluster state (bundle-ledger.ts), the two-phase commit with raylets (bundle-client.ts), giving
 * bundles back there and on their raylets (bundle-cancels.ts), and a removed group's release — its
 * actors killed, everything given back, the removal recorded in the table until it settles.
 */
export interface GroupEffectsDeps {
  readonly events: EventPublisher;
  readonly bundles: BundleClient;
  readonly log: (line: string) => void;
  readonly nodeUnreachable: (nodeId: string) => void;
  /** Kills every actor placed (or waiting to be placed) in the group's bundles; resolves once their raylets dropped them. */
  readonly killActorsInGroup: (pgId: string, cause: string) => Promise<void>;
}

/** The table (answers reach the group's machine, removals are recorded), the ledger and the cancels, built by the directory. */
export interface GroupEffectsParts {
  readonly table: Pick<GroupTable, 'entry' | 'removing'>;
  readonly ledger: BundleLedger;
  readonly cancels: BundleCancels;
}

export class GroupEffectRunner {
  constructor(
    private readonly deps: GroupEffectsDeps,
    private readonly parts: GroupEffectsParts,
  ) {}

  /** Runs one of a group machine's effects; a failure is logged, never thrown into the machine. */
  run(effect: GroupEffect): void {
    const { context } = effect;
    try {
      switch (effect.type) {
        case 'reserve':
          return this.parts.ledger.reserve(context.pgId, context.placing, context.bundles);
        case 'requestPrepare':
          return this.#twoPhase(context, 'prepare');
        case 'requestCommit':
          return this.#twoPhase(context, 'commit');
        case 'commitBundles':
          return this.parts.ledger.commit(context.pgId, context.placing);
        case 'abandon':
          return void this.#giveBack(context.pgId, context.placing);
        case 'loseNode':
          return this.parts.ledger.lose(context.pgId, effect.params.nodeId);
        case 'release': {
          const killed = this.deps.killActorsInGroup(context.pgId, `placement group ${context.pgId} was removed`);
          const cancelled = this.#giveBack(context.pgId, undefined);
          const pgId = context.pgId;
          const settled = Promise.all([killed, ...cancelled]).then(() => undefined);
          this.parts.table.removing(pgId, settled);
          return;
        }
        case 'reportScheduleFailed':
          return this.deps.events.scheduleFailed({ kind: 'placement_group', id: context.pgId, ...(context.name === undefined ? {} : { name: context.name }) }, effect.params.failure);
      }
    } catch (err) {
      this.deps.log(`${effect.type} for placement group ${context.pgId} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** Asks every raylet of the round to prepare (or commit) its bundles; one answer event for the round. */
  #twoPhase(c: PlacementGroupContext, phase: 'prepare' | 'commit'): void {
    const { pgId, round } = c;
    const asks = c.placing.map((index) => {
      const b = c.bundles[index];
      const nodeId = b.nodeId!;
      const outcome = phase === 'prepare' ? this.deps.bundles.prepare(nodeId, { pgId, index, resources: b.resources }) : this.deps.bundles.commit(nodeId, { pgId, index });
      return outcome.then((o): BundleOutcome => {
        if (!o.ok && o.unreachable) this.deps.nodeUnreachable(nodeId);
        return o;
      });
    });
    void Promise.all(asks).then((outcomes) => {
      const ref = this.parts.table.entry(pgId)?.ref;
      if (!ref || ref.getSnapshot().status !== 'active') return;
      const failed = outcomes.find((o): o is Extract<BundleOutcome, { ok: false }> => !o.ok);
      if (phase === 'prepare') ref.send(failed ? { type: 'PREPARE_FAILED', round, cause: failed.cause } : { type: 'PREPARED', round });
      else ref.send(failed ? { type: 'COMMIT_FAILED', round, cause: failed.cause } : { type: 'COMMITTED', round });
    });
  }

  /** Gives back the given bundles (all when undefined): in the cluster state, and on their raylets. */
  #giveBack(pgId: string, indexes: readonly number[] | undefined): Promise<unknown>[] {
    return this.parts.ledger.giveBack(pgId, indexes).map(({ nodeId, index }) => this.parts.cancels.cancel(nodeId, { pgId, index }));
  }
}
