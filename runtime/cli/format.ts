import { NODE_ID_LABEL, NODE_NAME_LABEL } from '../../lib/labels/builtin.ts';
import type { NodeInfo } from '../client/cluster-info.types.ts';

/** Columns padded to their widest cell; the last column is not padded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
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
