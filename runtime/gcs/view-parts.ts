import type { ActorLabelRecord } from '../../lib/cluster/actor-label-counts.ts';
import { labelCounts } from '../../lib/cluster/actor-label-counts.ts';
import { encode, encodedSize } from '../../protocols/codec.ts';
import type { NodeView, ViewDelta } from '../../protocols/messages/view.ts';

type Load = NonNullable<ViewDelta['loads']>[number];
type LabelChange = NonNullable<ViewDelta['actorLabelsChanged']>[number];
type Item = { kind: 'upsert'; value: NodeView } | { kind: 'removal'; value: string } | { kind: 'labels'; value: LabelChange } | { kind: 'load'; value: Load };

/**
 * A delta too large for one message, as several consecutive ones that add up to it: each part is a
 * delta of its own (`previous` = the part before), so a raylet applies them one after another as it
 * would any deltas, and a raylet that misses one asks for a snapshot as it would anyway. Node upserts
 * go first, then removals, then label-count changes, then load reports — a change or a load only
 * ever refers to a node an earlier part (or an earlier delta) sent. Counts too large for one part (a
 * node's first send with many actors, or thousands of actors placed on a node within one view
 * interval: a single delta of megabytes was over the bus's limit and dropped whole, bench/sim) are
 * shared out: a first send keeps what fits as its `actorLabels` and the rest follow as changes that
 * add to them; a node's changes go as several entries.
 */
export function splitDelta(delta: ViewDelta, maxBytes: number): { delta: ViewDelta; bytes: Uint8Array }[] {
  const budget = Math.max(1024, Math.floor(maxBytes * 0.9) - 256);
  const labelItems = (c: LabelChange): Item[] => chunks(c.changes, budget).map((changes) => ({ kind: 'labels' as const, value: { nodeId: c.nodeId, changes } }));
  const items: Item[] = [];
  const later: Item[] = [];
  for (const n of delta.upserts) {
    if (n.actorLabels === undefined || encodedSize(n) <= budget) {
      items.push({ kind: 'upsert', value: n });
      continue;
    }
    const { actorLabels, ...rest } = n;
    const [first, ...others] = chunks(actorLabels, Math.max(256, budget - encodedSize(rest)));
    items.push({ kind: 'upsert', value: { ...rest, actorLabels: first } });
    for (const changes of others) later.push({ kind: 'labels', value: { nodeId: n.nodeId, changes } });
  }
  items.push(...delta.removals.map((value) => ({ kind: 'removal' as const, value })));
  items.push(...later, ...(delta.actorLabelsChanged ?? []).flatMap(labelItems));
  items.push(...(delta.loads ?? []).map((value) => ({ kind: 'load' as const, value })));
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
    const labels = part.filter((i) => i.kind === 'labels').map((i) => i.value as LabelChange);
    if (labels.length) next.actorLabelsChanged = labels;
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

/** Counts (or changes) shared out in records each about `budget` bytes at most. */
function chunks(counts: ActorLabelRecord, budget: number): ActorLabelRecord[] {
  const out: ActorLabelRecord[] = [];
  let chunk: Record<string, Record<string, Record<string, number>>> = {};
  let size = 0;
  for (const [namespace, key, value, n] of labelCounts(counts)) {
    const entrySize = namespace.length + key.length + value.length + 16;
    if (size + entrySize > budget && size > 0) {
      out.push(chunk);
      chunk = {};
      size = 0;
    }
    ((chunk[namespace] ??= {})[key] ??= {})[value] = n;
    size += entrySize;
  }
  if (size > 0) out.push(chunk);
  return out;
}
