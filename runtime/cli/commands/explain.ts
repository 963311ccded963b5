import { parseArgs, stringFlag, UsageError } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, withCluster } from '../connection.ts';
import type { DryRun, DryRunNode, PlacementGroupDryRun } from '../../../lib/scheduling/dry-run.ts';
import type { CliIo } from '../io.ts';

const FLAGS = { address: 'string', cluster: 'string', namespace: 'string', options: 'string', 'placement-group': 'string', json: 'boolean' } as const;

/**
 * `orrery explain --options '<json>'` (an actor's options, as `cluster.actor(C).options(…)` takes
 * them) or `--placement-group '<json>'` (a group's options): where it would be placed now and why
 * not elsewhere, node by node — a dry run of the GCS's scheduler; nothing is created.
 */
export async function explain(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('explain', argv, FLAGS);
  const options = jsonFlag(stringFlag(args, 'options'), '--options');
  const group = jsonFlag(stringFlag(args, 'placement-group'), '--placement-group');
  if ((options === undefined) === (group === undefined)) throw new UsageError("explain needs one of --options '<json>' (an actor) and --placement-group '<json>'");
  const address = addressOf('explain', args, io.env)!;
  const cluster = clusterOf('explain', args, io.env);
  const namespace = stringFlag(args, 'namespace');
  await withCluster(address, cluster, async (client) => {
    if (options !== undefined) {
      const dry = await client.explain({ ...options, ...(namespace === undefined ? {} : { namespace }) });
      if (args.flags.json === true) return io.out(JSON.stringify(dry, null, 2));
      const names = new Map((await client.nodes()).map((n) => [n.nodeId, n.name]));
      for (const line of describeActor(dry, names)) io.out(line);
    } else {
      const dry = await client.explainPlacementGroup({ ...group!, ...(namespace === undefined ? {} : { namespace }) } as never);
      if (args.flags.json === true) return io.out(JSON.stringify(dry, null, 2));
      const names = new Map((await client.nodes()).map((n) => [n.nodeId, n.name]));
      for (const line of describeGroup(dry, names)) io.out(line);
    }
  }, io.access);
  return 0;
}

function jsonFlag(text: string | undefined, flag: string): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag} is not JSON: ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new UsageError(`${flag} must be a JSON object, e.g. '{"numCpus": 1}'`);
  return value as Record<string, unknown>;
}

const tierName = (tier: number | undefined): string => (tier === undefined || tier === 0 ? 'its labelSelector' : `fallbackStrategy[${tier - 1}]`);

/** The human form: the verdict, the soft terms, then one line per node. */
export function describeActor(dry: DryRun, names: ReadonlyMap<string, string>): string[] {
  const name = (id: string) => (names.has(id) ? `${names.get(id)} (${id})` : id);
  const out: string[] = [];
  if (dry.decision === 'placed') out.push(`would be placed on ${name(dry.nodeId!)}, by ${tierName(dry.tier)}`);
  else if (dry.decision === 'unschedulable') out.push(`cannot be placed now (${dry.failure!.code}, ${dry.failure!.reason}): ${dry.failure!.message}`);
  else out.push(`would be refused: ${dry.error!.message} [${dry.error!.code}]`);
  for (const t of dry.softTerms) out.push(`  preferred ${t.term} (weight ${t.weight}): ${t.held ? 'holds there' : 'does not hold there'}`);
  out.push(...nodeLines(dry.nodes, name));
  return out;
}

export function describeGroup(dry: PlacementGroupDryRun, names: ReadonlyMap<string, string>): string[] {
  const name = (id: string) => (names.has(id) ? `${names.get(id)} (${id})` : id);
  if (dry.decision === 'placed') {
    return [`would be placed${dry.tier ? `, by fallbackStrategy[${dry.tier - 1}]` : ''}:`, ...dry.bundles!.map((b) => `  bundle ${b.index} on ${name(b.nodeId)}`)];
  }
  return [`cannot be placed now (${dry.failure!.code}, ${dry.failure!.reason}): ${dry.failure!.message}`, ...nodeLines(dry.failure!.nodes.map((n) => ({ ...n, fits: n.reasons.length === 0 })), name)];
}

function nodeLines(nodes: readonly DryRunNode[], name: (id: string) => string): string[] {
  if (nodes.length === 0) return ['nodes: none'];
  return ['nodes:', ...nodes.map((n) => `  ${name(n.nodeId)}: ${n.fits ? 'fits' : n.reasons.join('; ')}`)];
}
