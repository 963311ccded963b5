import { DEFAULT_MAX_BYTES, encodedSize } from '../../protocols/codec.ts';
import { withoutBundleResources, type NodeInfoWire } from '../../protocols/messages/cluster.ts';

/** Room left in one message for what goes around a node (an event's type, time and seq; a reply's envelope). */
const ENVELOPE_BYTES = 64 * 1024;

/**
 * The node as one message may carry it: itself, or — when it holds so many placement-group bundles
 * that it would pass the message size limit (two resource names per bundle in its total and its
 * available: ~5,000 bundles) — without its bundle resources, `bundleResourcesOmitted` saying how
 * many names are left out. Node events and the answers to set_node_labels, set_node_taints and
 * drain_node go this way: before, such a node's events were never published (node_dead included)
 * and those requests failed TOO_LARGE although the change was made. list_nodes sends every name
 * (paging.ts, nodesPage).
 */
export function fitNode(node: NodeInfoWire, maxBytes = DEFAULT_MAX_BYTES): NodeInfoWire {
  return encodedSize(node) <= maxBytes - ENVELOPE_BYTES ? node : withoutBundleResources(node);
}
