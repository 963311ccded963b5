/**
 * Built-in labels. Everything under the `orrery.io/` prefix (or a subdomain of it) belongs to the
 * runtime: raylets set the node labels below when they register, and every actor carries
 * ACTOR_ID_LABEL so actor affinity can name actors by id. Users may select on all of them; they may
 * set only the ones describing the machine (SETTABLE_BUILTIN_LABELS in validate.ts) — never the
 * node's id, name or ip, which the raylet owns.
 */
import { InvalidLabelError } from '../errors.ts';
import { isReservedPrefix, validateLabels } from './validate.ts';

export { RESERVED_LABEL_PREFIX } from './validate.ts';

export const NODE_ID_LABEL = 'orrery.io/node-id';
export const NODE_NAME_LABEL = 'orrery.io/node-name';
export const NODE_IP_LABEL = 'orrery.io/node-ip';
export const ACCELERATOR_TYPE_LABEL = 'orrery.io/accelerator-type';
export const MARKET_TYPE_LABEL = 'orrery.io/market-type';
export const NODE_GROUP_LABEL = 'orrery.io/node-group';
export const AVAILABILITY_ZONE_LABEL = 'orrery.io/availability-zone';
export const AVAILABILITY_REGION_LABEL = 'orrery.io/availability-region';
export const ACTOR_ID_LABEL = 'orrery.io/actor-id';

/** Does this key sit under the reserved `orrery.io/` prefix (or a subdomain of it)? */
export function isReservedKey(key: string): boolean {
  const slash = key.indexOf('/');
  return slash > 0 && isReservedPrefix(key.slice(0, slash));
}

export interface BuiltinNodeFacts {
  nodeId: string;
  nodeName: string;
  nodeIp?: string;
  /** '' on CPU-only machines, as seed 002 describes. */
  acceleratorType?: string;
  marketType?: string;
  nodeGroup?: string;
  availabilityZone?: string;
  availabilityRegion?: string;
}

/**
 * The built-in labels of a node: only the facts that are present (not undefined) become labels.
 * Values are validated like any label value (InvalidLabelError), and node id and name must be
 * non-empty.
 */
export function builtinNodeLabels(facts: BuiltinNodeFacts): Readonly<Record<string, string>> {
  const entries: [string, string | undefined][] = [
    [NODE_ID_LABEL, facts.nodeId],
    [NODE_NAME_LABEL, facts.nodeName],
    [NODE_IP_LABEL, facts.nodeIp],
    [ACCELERATOR_TYPE_LABEL, facts.acceleratorType],
    [MARKET_TYPE_LABEL, facts.marketType],
    [NODE_GROUP_LABEL, facts.nodeGroup],
    [AVAILABILITY_ZONE_LABEL, facts.availabilityZone],
    [AVAILABILITY_REGION_LABEL, facts.availabilityRegion],
  ];
  const labels: Record<string, string> = {};
  for (const [key, value] of entries) {
    if (value !== undefined) labels[key] = value;
  }
  const validated = validateLabels(labels, { allowReserved: true });
  for (const key of [NODE_ID_LABEL, NODE_NAME_LABEL]) {
    if (!validated[key]) throw new InvalidLabelError(key, validated[key] ?? '', 'value must not be empty');
  }
  return validated;
}
