import { NODE_IP_LABEL, NODE_NAME_LABEL } from '../../lib/labels/builtin.ts';
import { OrreryError } from '../../lib/errors.ts';
import type { NodeInfo } from '../client/cluster-info.types.ts';
import { UsageError, stringFlag, type ParsedArgs } from './args.ts';

/**
 * Which node `orrery label` / `orrery taint` change: exactly one of --node-id, --node-name and
 * (taint only) --node-ip. Only live nodes (ALIVE or DRAINING) are candidates; none is NODE_NOT_FOUND,
 * several (two raylets on one machine share an ip) is AMBIGUOUS_NODE naming them — the command then
 * changes nothing.
 */
export type NodeSelector = { readonly flag: '--node-id' | '--node-name' | '--node-ip'; readonly value: string };

export function nodeSelectorOf(command: string, args: ParsedArgs, allowed: readonly ('node-id' | 'node-name' | 'node-ip')[]): NodeSelector {
  const given = allowed.filter((f) => stringFlag(args, f) !== undefined);
  const names = allowed.map((f) => `--${f}`).join(', ');
  if (given.length === 0) throw new UsageError(`${command}: which node? give one of ${names}`, `--${allowed[0]}`);
  if (given.length > 1) throw new UsageError(`${command}: give only one of ${names}`, `--${given[1]}`);
  const flag = `--${given[0]}` as NodeSelector['flag'];
  return { flag, value: stringFlag(args, given[0])! };
}

export class NodeSelectionError extends OrreryError {
  override name = 'NodeSelectionError';
}

export function selectNode(nodes: readonly NodeInfo[], selector: NodeSelector): NodeInfo {
  const live = nodes.filter((n) => n.state !== 'DEAD');
  const matches = live.filter((n) => {
    if (selector.flag === '--node-id') return n.nodeId === selector.value;
    if (selector.flag === '--node-name') return (n.labels[NODE_NAME_LABEL] ?? n.name) === selector.value;
    return n.labels[NODE_IP_LABEL] === selector.value;
  });
  const what = `${selector.flag} ${JSON.stringify(selector.value)}`;
  if (matches.length === 0) {
    const dead = nodes.some((n) => n.state === 'DEAD' && (n.nodeId === selector.value || n.name === selector.value));
    throw new NodeSelectionError('NODE_NOT_FOUND', `no live node matches ${what}${dead ? ' (that node is DEAD)' : ''}`, { detail: { [selector.flag.slice(2)]: selector.value } });
  }
  if (matches.length > 1) {
    const list = matches.map((n) => `${n.name} (${n.nodeId})`).join(', ');
    throw new NodeSelectionError('AMBIGUOUS_NODE', `${matches.length} live nodes match ${what}: ${list}; use --node-id`, { detail: { nodes: matches.map((n) => n.nodeId) } });
  }
  return matches[0];
}

/** `k1,k2`: the keys an option removes. */
export function keyList(command: string, flag: string, text: string | undefined): string[] {
  if (text === undefined) return [];
  const keys = text.split(',').map((k) => k.trim());
  if (keys.some((k) => k === '')) throw new UsageError(`${command}: ${flag}: empty key (a stray ',')`, flag);
  if (new Set(keys).size !== keys.length) throw new UsageError(`${command}: ${flag}: a key is given twice`, flag);
  return keys;
}
