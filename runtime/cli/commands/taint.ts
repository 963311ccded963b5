import { OrreryError } from '../../../lib/errors.ts';
import { validateLabelKey } from '../../../lib/labels/validate.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, withCluster } from '../connection.ts';
import { pairs, nodeJson } from '../format.ts';
import type { CliIo } from '../io.ts';
import { parseTaintsFlag } from '../node-flags.ts';
import { keyList, nodeSelectorOf, selectNode } from '../node-target.ts';

const FLAGS = {
  address: 'string', cluster: 'string', 'node-id': 'string', 'node-name': 'string', 'node-ip': 'string', add: 'string', remove: 'string', json: 'boolean',
} as const;

/**
 * `orrery taint (--node-id ID | --node-name NAME | --node-ip IP) (--add k=v[:Effect][,…] | --remove k[,…])`
 * (seed 003 §2.2): adds or removes taints of a live node in one request. Effects: NoSchedule (the
 * default) keeps new work away and leaves running actors in place; PreferNoSchedule avoids the node
 * when another will do; NoExecute also moves running actors that do not tolerate it to other nodes
 * (docs/failover.md). Values are checked before anything is sent, a removed key must be on the node,
 * and nothing is half-applied; the node's taints are printed (`--json`: the NodeInfo).
 */
export async function taint(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('taint', argv, FLAGS);
  const selector = nodeSelectorOf('taint', args, ['node-id', 'node-name', 'node-ip']);
  const addText = stringFlag(args, 'add');
  const remove = keyList('taint', '--remove', stringFlag(args, 'remove'));
  if (addText === undefined && remove.length === 0) throw new UsageError('taint: nothing to change: give --add k=v[:Effect] and/or --remove k', '--add');
  let add: Record<string, string> | undefined;
  try {
    if (addText !== undefined) add = parseTaintsFlag(addText);
  } catch (err) {
    throw new UsageError(`taint: --add: ${err instanceof Error ? err.message : String(err)}`, '--add');
  }
  try {
    for (const key of remove) validateLabelKey(key);
  } catch (err) {
    throw new UsageError(`taint: --remove: ${err instanceof Error ? err.message : String(err)}`, '--remove');
  }
  const address = addressOf('taint', args, io.env)!;
  const cluster = clusterOf('taint', args, io.env);
  await withCluster(address, cluster, async (client) => {
    const node = selectNode(await client.nodes(), selector);
    const missing = remove.filter((k) => !Object.hasOwn(node.taints, k));
    if (missing.length > 0) {
      throw new OrreryError('TAINT_NOT_FOUND', `taint: node ${node.name} (${node.nodeId}) has no taint ${missing.map((k) => JSON.stringify(k)).join(', ')}; nothing changed`, {
        detail: { nodeId: node.nodeId, keys: missing },
      });
    }
    const changed = await client.setNodeTaints(node.nodeId, { ...(add ? { add } : {}), ...(remove.length ? { remove } : {}) });
    if (args.flags.json === true) io.out(JSON.stringify(nodeJson(changed), null, 2));
    else io.out(`node ${changed.name} (${changed.nodeId}): taints ${pairs(changed.taints)}`);
  }, io.access);
  return 0;
}
