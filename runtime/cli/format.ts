import { NODE_ID_LABEL, NODE_NAME_LABEL } from '../../lib/labels/builtin.ts';
import type { NodeInfo, PlacementGroupInfo } from '../client/cluster-info.types.ts';

/**
 * Columns padded to their widest cell; the last column is not padded. `paint` colours a body cell
 * after padding, so colour codes never count towards a column's width.
 */
export function table(header: readonly string[], rows: readonly (readonly string[])[], paint?: (cell: string, column: number) => string): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[], body: boolean): string =>
    cells
      .map((c, i) => {
        const padded = i === cells.length - 1 ? c : c.padEnd(widths[i]);
        return body && paint ? paint(padded, i) : padded;
      })
      .join('  ')
      .trimEnd();
  return [line(header, false), ...rows.map((r) => line(r, true))];
}

const COLOURS: Readonly<Record<string, number>> = {
  ALIVE: 32, CREATED: 32, // green
  PENDING: 33, SCHEDULED: 33, RESTARTING: 33, PREPARED: 33, RESCHEDULING: 33, DRAINING: 33, DEPENDENCIES_UNREADY: 33, // yellow
  DEAD: 31, REMOVED: 31, // red
};

/** A state word in its colour (when `on`); the text is untouched otherwise. */
export function stateColour(text: string, on: boolean | undefined): string {
  if (!on) return text;
  const code = COLOURS[text.trim()];
  return code === undefined ? text : `\u001b[${code}m${text}\u001b[0m`;
}

/** `CPU 3/18, GPU 0/1`: used of total over the given nodes, every resource any of them has. */
export function clusterUse(nodes: readonly NodeInfo[]): string {
  const total: Record<string, number> = {};
  const available: Record<string, number> = {};
  for (const n of nodes) {
    for (const [name, v] of Object.entries(n.resources.total)) total[name] = (total[name] ?? 0) + v;
    for (const [name, v] of Object.entries(n.resources.available)) available[name] = (available[name] ?? 0) + v;
  }
  return resourceUse({ resources: { total, available } } as NodeInfo);
}

/** A node as the CLI prints it in JSON: the client's NodeInfo, and its taints with their effect spelt out. */
export function nodeJson(node: NodeInfo): NodeInfo & { taintList: { key: string; value: string; effect: string }[] } {
  const taintList = Object.entries(node.taints).map(([key, raw]) => {
    const colon = raw.lastIndexOf(':');
    const effect = colon >= 0 ? raw.slice(colon + 1) : 'NoSchedule';
    return { key, value: colon >= 0 ? raw.slice(0, colon) : raw, effect };
  });
  return { ...node, taintList };
}

export function pairs(record: Readonly<Record<string, string>>): string {
  const entries = Object.entries(record);
  return entries.length === 0 ? '-' : entries.map(([k, v]) => `${k}=${v}`).join(',');
}

/** Node labels without the two built-ins every listing shows in columns of their own. */
export function extraLabels(node: NodeInfo): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(node.labels)) if (k !== NODE_ID_LABEL && k !== NODE_NAME_LABEL) out[k] = v;
  return out;
}

/** `CPU 1/4, GPU 0/1`: used of total, for every resource the node has. */
export function resourceUse(node: NodeInfo): string {
  const { total, available } = node.resources;
  const names = Object.keys(total).sort();
  if (names.length === 0) return '-';
  return names.map((name) => `${name} ${amount(name, total[name] - (available[name] ?? 0))}/${amount(name, total[name])}`).join(', ');
}

function amount(name: string, value: number): string {
  const rounded = Math.round(value * 10_000) / 10_000;
  if (name !== 'memory' && name !== 'object_store_memory') return String(rounded);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = rounded;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)}${units[u]}`;
}

/** `{CPU:1,GPU:0.5}`: one bundle's resources, names sorted. */
export function bundleResources(resources: Readonly<Record<string, number>>): string {
  const names = Object.keys(resources).sort();
  return `{${names.map((name) => `${name}:${amount(name, resources[name])}`).join(',')}}`;
}

/**
 * `0:{CPU:1}@node-a 1:{CPU:1}@node-b`: each bundle with the node it is reserved on (by name when
 * `nodeNames` knows the id, else the id); a bundle not placed yet has no `@`.
 */
export function bundlePlacement(pg: PlacementGroupInfo, nodeNames: ReadonlyMap<string, string> = new Map()): string {
  if (pg.bundles.length === 0) return '-';
  return pg.bundles
    .map((b) => `${b.index}:${bundleResources(b.resources)}${b.nodeId === undefined ? '' : `@${nodeNames.get(b.nodeId) ?? b.nodeId}`}`)
    .join(' ');
}

/** `orrery list placement-groups`: one row per group, what it waits for (or why it was removed) last. */
export function placementGroupTable(groups: readonly PlacementGroupInfo[], nodeNames: ReadonlyMap<string, string> = new Map()): string[] {
  return table(PLACEMENT_GROUP_COLUMNS, placementGroupRows(groups, nodeNames));
}

export const PLACEMENT_GROUP_COLUMNS = ['PG_ID', 'NAME', 'STATE', 'STRATEGY', 'BUNDLES', 'DETAIL'];

export function placementGroupRows(groups: readonly PlacementGroupInfo[], nodeNames: ReadonlyMap<string, string> = new Map()): string[][] {
  return groups.map((pg) => [
    pg.id,
    pg.name ? `${pg.namespace}/${pg.name}` : '-',
    pg.state,
    pg.strategy,
    bundlePlacement(pg, nodeNames),
    oneLine(pg.removedCause ?? pg.pendingReason ?? ''),
  ]);
}

/**
 * `orrery status`'s section: counts per state, then every group that is not CREATED with what it
 * waits for (PENDING, RESCHEDULING, PREPARED) or why it was removed.
 */
export function placementGroupStatus(groups: readonly PlacementGroupInfo[]): string[] {
  const byState = new Map<string, number>();
  for (const pg of groups) byState.set(pg.state, (byState.get(pg.state) ?? 0) + 1);
  const counts = [...byState].map(([s, k]) => `${k} ${s}`).join(', ');
  const lines = [`Placement groups: ${groups.length}${counts ? ` (${counts})` : ''}`];
  const waiting = groups.filter((pg) => pg.state !== 'CREATED');
  if (waiting.length > 0) {
    lines.push('Placement groups not created:');
    for (const pg of waiting) {
      const who = `${pg.id}${pg.name ? ` (${pg.namespace}/${pg.name})` : ''}`;
      const why = pg.state === 'REMOVED' ? (pg.removedCause ?? 'removed') : (pg.pendingReason ?? 'waiting to be scheduled');
      lines.push(`  ${who} ${pg.state}: ${oneLine(why)}`);
    }
  }
  return lines;
}

/** A table cell or status line stays one line. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}
