import { InvalidOptionError } from '../../lib/errors.ts';
import { validateLabels } from '../../lib/labels/validate.ts';
import { parseResources } from '../../lib/resources/resource-set.ts';
import { parseTaints } from '../../lib/scheduling/taints.ts';
import type { NodeSpec } from './local-cluster.types.ts';

/** A NodeSpec checked and completed: a name, CPU 1 unless given. */
export interface ResolvedNodeSpec {
  readonly name: string;
  readonly resources: Record<string, number>;
  readonly labels: Record<string, string>;
  readonly taints: Record<string, string>;
}

/** Validates a node spec up front, so a bad one fails before any process starts. */
export function resolveNodeSpec(spec: NodeSpec, fallbackName: string): ResolvedNodeSpec {
  if (spec === null || typeof spec !== 'object') throw new InvalidOptionError('nodes[]', spec, 'expected { name?, resources?, labels?, taints? }');
  const name = spec.name ?? fallbackName;
  if (typeof name !== 'string' || name === '') throw new InvalidOptionError('name', name, 'expected a non-empty node name');
  const resources = { CPU: 1, ...(spec.resources ?? {}) };
  parseResources(resources, 'resources');
  const labels = { ...validateLabels(spec.labels ?? {}) };
  const taints = { ...(spec.taints ?? {}) };
  parseTaints(taints);
  return { name, resources, labels, taints };
}

/** The raylet flags (runtime/raylet/main.ts) for a resolved spec. */
export function rayletFlags(spec: ResolvedNodeSpec): string[] {
  const { CPU, GPU, ...custom } = spec.resources;
  const pairs = (r: Record<string, string>): string =>
    Object.entries(r)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
  const flags = ['--node-name', spec.name, '--num-cpus', String(CPU ?? 0)];
  if (GPU !== undefined) flags.push('--num-gpus', String(GPU));
  if (Object.keys(custom).length > 0) flags.push('--resources', JSON.stringify(custom));
  if (Object.keys(spec.labels).length > 0) flags.push('--labels', pairs(spec.labels));
  if (Object.keys(spec.taints).length > 0) flags.push('--taints', pairs(spec.taints));
  return flags;
}
