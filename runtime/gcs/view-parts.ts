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
  for (const whole of delta.upserts) {
    if (encodedSize(whole) <= budget) {
      items.push({ kind: 'upsert', value: whole });
      continue;
    }
    let n = whole;
    if (n.actorLabels !== undefined) {
      const { actorLabels, ...rest } = n;
      const [first, ...others] = chunks(actorLabels, Math.max(256, budget - encodedSize(rest)));
      n = { ...rest, actorLabels: first };
      for (const changes of others) later.push({ kind: 'labels', value: { nodeId: n.nodeId, changes } });
    }
    // a node holding thousands of bundles: its resource names in runs, the first with the node
    const [first, ...more] = encodedSize(n) <= budget ? [n] : deltaParts(n, budget);
    items.push({ kind: 'upsert', value: first! });
    for (const part of more) items.push({ kind: 'upsert', value: part });
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
  // node ids upserted in the part being filled: a node's next run of names goes in a later part
  const upserted = new Set<string>();
  for (const item of items) {
    const itemSize = encodedSize(item.value);
    const again = item.kind === 'upsert' && upserted.has(item.value.nodeId);
    if (again || size + itemSize > budget) {
      emit();
      upserted.clear();
    }
    part.push(item);
    if (item.kind === 'upsert') upserted.add(item.value.nodeId);
    size += itemSize;
  }
  emit();
  return out;
}

/**
 * A node upsert whose resource names alone pass `budget` (two names per bundle committed on it), as
 * several upserts of that node for consecutive deltas: the first with the node's header, its label
 * counts and a run of its names (as `resources` when the upsert sent the whole sets — it is the
 * node's first send — or as `resourcesChanged`), the others with the header and further runs as
 * `resourcesChanged`, which add to what the first sent. Each run takes at most ~half the budget, so
 * no two runs of one node share a part. Before, such an upsert threw TOO_LARGE out of the view's
 * timer and the GCS exited: after a restart with a node holding ~5,000 bundles, every time.
 */
export function deltaParts(n: NodeView, budget: number): NodeView[] {
  const { resources, resourcesChanged, actorLabels, ...header } = n;
  const runBudget = Math.max(1024, Math.floor(budget / 2) - encodedSize(header) - (actorLabels ? encodedSize(actorLabels) : 0));
  if (resources !== undefined) {
    const runs = nameRuns(resources.total, resources.available, [], runBudget);
    return runs.map((run, i) =>
      i === 0
        ? Object.assign({}, header, { resources: { total: run.total, available: run.available } }, actorLabels ? { actorLabels } : {})
        : Object.assign({}, header, { resourcesChanged: { total: run.total, available: run.available } }),
    );
  }
  const changed = resourcesChanged ?? {};
  const runs = nameRuns(changed.total ?? {}, changed.available ?? {}, changed.removed ?? [], runBudget);
  return runs.map((run, i) =>
    Object.assign(
      {},
      header,
      {
        resourcesChanged: Object.assign(
          {},
          Object.keys(run.total).length ? { total: run.total } : {},
          Object.keys(run.available).length ? { available: run.available } : {},
          run.removed.length ? { removed: run.removed } : {},
        ),
      },
      i === 0 && actorLabels ? { actorLabels } : {},
    ),
  );
}

/** A run of a node's resource names: the first of them (in name order), and their values. */
export interface NameRun {
  readonly first: string;
  readonly total: Record<string, number>;
  readonly available: Record<string, number>;
  readonly removed: string[];
}

/**
 * A node's resource sets split by name, in name order, each run's names taking at most `budget`
 * bytes (a name, its header and a number, once per set it is in); `removed` names go in the runs too.
 * At least one run, with at least one name when there is any.
 */
export function nameRuns(
  total: Readonly<Record<string, number>>,
  available: Readonly<Record<string, number>>,
  removed: readonly string[],
  budget: number,
): NameRun[] {
  const names = [...new Set([...Object.keys(total), ...Object.keys(available), ...removed])].sort();
  const gone = new Set(removed);
  const runs: NameRun[] = [];
  let run: NameRun = { first: names[0] ?? '', total: {}, available: {}, removed: [] };
  let size = 0;
  for (const name of names) {
    const inTotal = Object.hasOwn(total, name);
    const inAvailable = Object.hasOwn(available, name);
    const cost = (Buffer.byteLength(name) + 11) * Math.max(1, (inTotal ? 1 : 0) + (inAvailable ? 1 : 0));
    if (size > 0 && size + cost > budget) {
      runs.push(run);
      run = { first: name, total: {}, available: {}, removed: [] };
      size = 0;
    }
    if (inTotal) run.total[name] = total[name]!;
    if (inAvailable) run.available[name] = available[name]!;
    if (gone.has(name)) run.removed.push(name);
    size += cost;
  }
  runs.push(run);
  return runs;
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
