import { OrreryError } from '../../../lib/errors.ts';
import { parseLabelsFlag } from '../../../lib/labels/parse.ts';
import { RESERVED_LABEL_PREFIX, validateLabelKey } from '../../../lib/labels/validate.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, withCluster } from '../connection.ts';
import { pairs, nodeJson } from '../format.ts';
import type { CliIo } from '../io.ts';
import { keyList, nodeSelectorOf, selectNode } from '../node-target.ts';

const FLAGS = { address: 'string', cluster: 'string', 'node-id': 'string', 'node-name': 'string', set: 'string', remove: 'string', json: 'boolean' } as const;

/**
 * `orrery label (--node-id ID | --node-name NAME) (--set k=v[,k2=v2] | --remove k[,k2])`: changes a
 * live node's user labels in one request (both options may be given: removals, then sets). Every
 * value is checked before anything is sent, a removed key must be on the node, and the GCS applies
 * the whole change or none of it; the new labels are printed (`--json`: the NodeInfo).
 */
/** The labels users set: the built-in `orrery.io/` ones describe the machine and are not theirs to change. */
function userLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([k]) => !k.startsWith(RESERVED_LABEL_PREFIX)));
}

export async function label(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('label', argv, FLAGS);
  const selector = nodeSelectorOf('label', args, ['node-id', 'node-name']);
  const setText = stringFlag(args, 'set');
  const remove = keyList('label', '--remove', stringFlag(args, 'remove'));
  if (setText === undefined && remove.length === 0) throw new UsageError('label: nothing to change: give --set k=v and/or --remove k', '--set');
  let set: Record<string, string> | undefined;
  try {
    if (setText !== undefined) set = { ...parseLabelsFlag(setText) };
  } catch (err) {
    throw new UsageError(`label: --set: ${err instanceof Error ? err.message : String(err)}`, '--set');
  }
  try {
    for (const key of remove) validateLabelKey(key);
  } catch (err) {
    throw new UsageError(`label: --remove: ${err instanceof Error ? err.message : String(err)}`, '--remove');
  }
  const address = addressOf('label', args, io.env)!;
  const cluster = clusterOf('label', args, io.env);
  await withCluster(address, cluster, async (client) => {
    const node = selectNode(await client.nodes(), selector);
    const missing = remove.filter((k) => !Object.hasOwn(node.labels, k));
    if (missing.length > 0) {
      throw new OrreryError('LABEL_NOT_FOUND', `label: node ${node.name} (${node.nodeId}) has no label ${missing.map((k) => JSON.stringify(k)).join(', ')}; nothing changed`, {
        detail: { nodeId: node.nodeId, keys: missing },
      });
    }
    const changed = await client.setNodeLabels(node.nodeId, { ...(set ? { set } : {}), ...(remove.length ? { remove } : {}) });
    if (args.flags.json === true) io.out(JSON.stringify(nodeJson(changed), null, 2));
    else io.out(`node ${changed.name} (${changed.nodeId}): labels ${pairs(userLabels(changed.labels))}`);
  }, io.access);
  return 0;
}
