import { placeActors } from './actors.ts';
import { placeGroups } from './groups.ts';
import { Round } from './round.ts';
import type { AutoscalingDecision, AutoscalingInput, DemandOutcome } from './types.ts';

export { unitsIn } from './round.ts';

/**
 * One autoscaling round: which nodes to launch so the pending work can be placed.
 *
 * The decision runs the scheduler itself (lib/scheduling) against the cluster as it stands plus
 * hypothetical nodes — those being launched, and candidates of each node type — so every constraint
 * the scheduler knows is honoured here without a second implementation (seed 001's complaint about
 * an autoscaler that "simulates the scheduling again"). For each demand, in turn:
 *
 *   1. its units go where the scheduler puts them: live nodes, nodes being launched, nodes this
 *      round already decided to launch (so demands share new nodes);
 *   2. when the scheduler places nothing, a node of each type that has room under maxWorkers, and
 *      whose every taint the demand tolerates (seed 003 §5.4), is tried: the types whose node the
 *      scheduler would take, at the best selector tier and soft-preference level, compete on the
 *      number of nodes (or, with costs, the price) the demand needs, then size; the winner is added
 *      and filled, and step 1 resumes.
 *
 * The seeds' rules follow: affinity to running actors launches nothing (a new node has none of
 * them); anti-affinity launches; a soft preference launches a matching type when one exists, else any
 * that fits; a selector on a unique label (a node id or IP) matches no type. Placement groups are
 * placed whole by scheduleBundles, adding nodes bundle by bundle until the group fits and then
 * dropping those it can do without — STRICT_SPREAD of n bundles may need n.
 *
 * Pure: no I/O, no clock; the scheduler's random choices come from `input.seed`.
 */
export function decide(input: AutoscalingInput): AutoscalingDecision {
  return run(new Round(input));
}

function run(round: Round): AutoscalingDecision {
  const forMinWorkers: Record<string, number> = {};
  for (const t of round.types) {
    while (round.count.get(t.type.name)! < t.type.minWorkers) {
      round.plan(t);
      forMinWorkers[t.type.name] = (forMinWorkers[t.type.name] ?? 0) + 1;
    }
  }
  const outcomes = new Map<string, DemandOutcome>();
  for (const d of ordered(round.input.demands)) {
    outcomes.set(d.key, d.kind === 'actor' ? placeActors(round, d) : placeGroups(round, d));
  }
  const launch: Record<string, number> = {};
  for (const [name, n] of round.planned) if (n > 0) launch[name] = n;
  return { launch, forMinWorkers, demands: round.input.demands.map((d) => outcomes.get(d.key)!) };
}

/** Placement groups first (they need whole sets of nodes), then actors; actors that must join running peers last, so peers placed this round count. */
function ordered(demands: AutoscalingInput['demands']): AutoscalingInput['demands'] {
  const rank = (d: AutoscalingInput['demands'][number]): number =>
    d.kind === 'placement_group' ? 0 : d.request.actorAffinity.some((e) => !e.soft && (e.operator === 'IN' || e.operator === 'EXISTS')) ? 2 : 1;
  return [...demands].sort((a, b) => rank(a) - rank(b));
}

