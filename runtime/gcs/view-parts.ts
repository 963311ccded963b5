import type { ActorLabelRecord } from '../../lib/cluster/actor-label-counts.ts';
import { labelCounts } from '../../lib/cluster/actor-label-counts.ts';
import { encode, encodedSize } from '../../protocols/codec.ts';
import type { NodeView, ViewDelta } from '../../protocols/messages/view.ts';

type Load = NonNullable<ViewDelta['loads']>[number];
type Item = { kind: 'upsert'; value: NodeView } | { kind: 'removal'; value: string } | { kind: 'load'; value: Load };

/**
 * A delta too large for one message, as several consecutive ones that add up to it: each part is a
 * delta of its own (`previous` = the part before), so a raylet applies them one after another as it
 * would any deltas, and a raylet that misses one asks for a snapshot as it would anyway. Node upserts
 * go first, then removals, then load reports — a load only ever refers to a node an earlier part (or
 * an earlier delta) sent. A node whose actor-label counts alone pass the budget (a node's first
 * send, or thousands of actors placed on it within one view interval: a single delta of megabytes
 * was over the bus's limit and dropped whole, bench/sim) goes as several upserts of it, its counts
 * shared out among them: the first carries the rest of the upsert, the next ones add counts
 * (`actorLabelsChanged`) to a node the receiver then holds.
 */
export function splitDelta(delta: ViewDelta, maxBytes: number): { delta: ViewDelta; bytes: Uint8Array }[] {
  const budget = Math.max(1024, Math.floor(maxBytes * 0.9) - 256);
  const items: Item[] = [
    ...delta.upserts.flatMap((n) => splitUpsert(n, budget).map((value) => ({ kind: 'upsert' as const, value }))),
    ...delta.removals.map((value) => ({ kind: 'removal' as const, value })),
    ...(delta.loads ?? []).map((value) => ({ kind: 'load' as const, value })),
  ];
  const out: { delta: ViewDelta; bytes: Uint8Array }[] = [];
  let version = delta.previous;
  let part: Item[] = [];
  let size = 0;
  const emit = (): void => {
    if (part.length === 0) return;
    const next: ViewDelta = {
      version: version + 1,
      previous: version,
      upserts: part.filter((i) => i.kind === 'upsert').map((i) => i.value as NodeView),
      removals: part.filter((i) => i.kind === 'removal').map((i) => i.value as string),
    };
    const loads = part.filter((i) => i.kind === 'load').map((i) => i.value as Load);
    if (loads.length) next.loads = loads;
    // a single item over the limit (a node with an enormous label set) throws here, as before
    out.push({ delta: next, bytes: encode('view_delta', next, { maxBytes }) });
    version = next.version;
    part = [];
    size = 0;
  };
  for (const item of items) {
    const itemSize = encodedSize(item.value);
    if (size + itemSize > budget) emit();
    part.push(item);
    size += itemSize;
  }
  emit();
  return out;
}

/** An upsert as one or more whose actor-label counts each fit `budget` (the first one keeps the rest of it). */
export function splitUpsert(node: NodeView, budget: number): NodeView[] {
  const counts = node.actorLabels ?? node.actorLabelsChanged;
  if (counts === undefined || encodedSize(node) <= budget) return [node];
  const { actorLabels: _, actorLabelsChanged: __, ...rest } = node;
  const header: NodeView = { nodeId: node.nodeId, name: node.name, state: node.state, labels: node.labels, taints: node.taints };
  const chunkBudget = Math.max(256, budget - encodedSize(rest));
  const chunks: ActorLabelRecord[] = [];
  let chunk: Record<string, Record<string, Record<string, number>>> = {};
  let size = 0;
  for (const [namespace, key, value, n] of labelCounts(counts)) {
    const entrySize = namespace.length + key.length + value.length + 16;
    if (size + entrySize > chunkBudget && size > 0) {
      chunks.push(chunk);
      chunk = {};
      size = 0;
    }
    ((chunk[namespace] ??= {})[key] ??= {})[value] = n;
    size += entrySize;
  }
  if (size > 0) chunks.push(chunk);
  return chunks.map((c, i) =>
    i === 0 ? { ...rest, ...(node.actorLabels ? { actorLabels: c } : { actorLabelsChanged: c }) } : { ...header, actorLabelsChanged: c },
  ) as NodeView[];
}
