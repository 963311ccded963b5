import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { OrreryError } from '../../lib/errors.ts';
import { NODE_GROUP_LABEL } from '../../lib/labels/builtin.ts';
import { labelValueProblem, validateLabels } from '../../lib/labels/validate.ts';
import { parseResources } from '../../lib/resources/resource-set.ts';
import { parseTaints } from '../../lib/scheduling/taints.ts';
import type { NodeType } from '../../lib/autoscaling/types.ts';

/**
 * The autoscaler's cluster config (docs/autoscaling.md):
 *
 *   cluster: default
 *   provider: { type: local }          # or { type: command, launch: "…", terminate: "…", list: "…" }
 *   idleTimeoutSeconds: 60
 *   maxConcurrentLaunches: 4
 *   nodeTypes:
 *     cpu: { resources: { CPU: 4 }, labels: { type: cpu }, minWorkers: 1, maxWorkers: 4 }
 *     gpu: { resources: { CPU: 4, GPU: 1 }, taints: { gpu_node: "true" }, maxWorkers: 2 }
 *
 * Every problem is an InvalidConfigError whose one line names the field (`nodeTypes.gpu.maxWorkers:
 * …`), raised before anything starts.
 */
export interface AutoscalerConfig {
  readonly cluster: string;
  readonly provider: ProviderConfig;
  readonly idleTimeoutSeconds: number;
  readonly maxConcurrentLaunches: number;
  /** A launched node that has not registered after this long is given up (and terminated). */
  readonly launchTimeoutSeconds: number;
  /** Seconds between two rounds (Ray's monitor: 5). */
  readonly updateIntervalSeconds: number;
  readonly nodeTypes: readonly NodeTypeConfig[];
}

export type ProviderConfig =
  | { readonly type: 'local' }
  | {
      readonly type: 'command';
      readonly launch: string;
      readonly terminate: string;
      /** Optional: prints the cluster's machines, one `NAME [LAUNCHED-AT]` per line (CommandProvider.launched). */
      readonly list?: string;
      readonly timeoutSeconds: number;
    };

/** A node type as configured (user quantities, record forms) and as lib/autoscaling takes it. */
export interface NodeTypeConfig {
  readonly name: string;
  /** User quantities ({ CPU: 4, GPU: 1 }), as `--resources` / `--num-cpus` take them. */
  readonly resources: Readonly<Record<string, number>>;
  /** The user's labels, without the node-group label every launched node also gets. */
  readonly labels: Readonly<Record<string, string>>;
  /** `key: value` or `key: "value:Effect"`, as `--taints` takes them. */
  readonly taints: Readonly<Record<string, string>>;
  readonly minWorkers: number;
  readonly maxWorkers: number;
  readonly cost?: number;
  /** The form lib/autoscaling decides with. */
  readonly type: NodeType;
}

export class InvalidConfigError extends OrreryError {
  override name = 'InvalidConfigError';
  constructor(readonly field: string, rule: string, where?: string) {
    super('INVALID_CONFIG', `${where ? `${where}: ` : ''}${field}: ${rule}`, { detail: { field, rule, ...(where ? { file: where } : {}) } });
  }
}

const TOP = ['cluster', 'provider', 'idleTimeoutSeconds', 'maxConcurrentLaunches', 'launchTimeoutSeconds', 'updateIntervalSeconds', 'nodeTypes'];
const TYPE_KEYS = ['resources', 'labels', 'taints', 'minWorkers', 'maxWorkers', 'cost'];
const TYPE_NAME = /^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/;

/** Reads and validates a config file. */
export function loadAutoscalerConfig(path: string): AutoscalerConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new OrreryError('CONFIG_UNREADABLE', `cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? String(err)})`, { detail: { path } });
  }
  return parseAutoscalerConfig(text, path);
}

export function parseAutoscalerConfig(text: string, where?: string): AutoscalerConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new InvalidConfigError('(document)', `not valid YAML: ${(err as Error).message.split('\n')[0]}`, where);
  }
  const fail = (field: string, rule: string): never => {
    throw new InvalidConfigError(field, rule, where);
  };
  const root = object(doc, '(document)', fail);
  for (const key of Object.keys(root)) if (!TOP.includes(key)) fail(key, `unknown field (expected one of ${TOP.join(', ')})`);
  const cluster = root.cluster === undefined ? 'default' : string(root.cluster, 'cluster', fail);
  const problem = labelValueProblem(cluster);
  if (cluster === '' || problem) fail('cluster', `${JSON.stringify(cluster)} cannot name a cluster${problem ? `: ${problem}` : ''}`);
  const provider = providerOf(root.provider, fail);
  const idleTimeoutSeconds = number(root.idleTimeoutSeconds, 'idleTimeoutSeconds', fail, { min: 0, fallback: 60 });
  const maxConcurrentLaunches = number(root.maxConcurrentLaunches, 'maxConcurrentLaunches', fail, { min: 1, int: true, fallback: 4 });
  const launchTimeoutSeconds = number(root.launchTimeoutSeconds, 'launchTimeoutSeconds', fail, { min: 1, fallback: 120 });
  const updateIntervalSeconds = number(root.updateIntervalSeconds, 'updateIntervalSeconds', fail, { min: 0.05, fallback: 2 });
  if (root.nodeTypes === undefined) fail('nodeTypes', 'required: at least one node type');
  const types = object(root.nodeTypes, 'nodeTypes', fail);
  if (Object.keys(types).length === 0) fail('nodeTypes', 'required: at least one node type');
  const nodeTypes = Object.entries(types).map(([name, raw]) => nodeTypeOf(name, raw, fail));
  return { cluster, provider, idleTimeoutSeconds, maxConcurrentLaunches, launchTimeoutSeconds, updateIntervalSeconds, nodeTypes };
}

function providerOf(raw: unknown, fail: (field: string, rule: string) => never): ProviderConfig {
  if (raw === undefined) return { type: 'local' };
  const p = object(raw, 'provider', fail);
  const type = string(p.type, 'provider.type', fail);
  if (type === 'local') {
    for (const key of Object.keys(p)) if (key !== 'type') fail(`provider.${key}`, 'the local provider takes no settings');
    return { type };
  }
  if (type === 'command') {
    for (const key of Object.keys(p)) if (!['type', 'launch', 'terminate', 'list', 'timeoutSeconds'].includes(key)) fail(`provider.${key}`, 'unknown field (expected launch, terminate, list, timeoutSeconds)');
    const launch = string(p.launch, 'provider.launch', fail);
    const terminate = string(p.terminate, 'provider.terminate', fail);
    if (launch.trim() === '') fail('provider.launch', 'a shell command is required');
    if (terminate.trim() === '') fail('provider.terminate', 'a shell command is required');
    const list = p.list === undefined ? undefined : string(p.list, 'provider.list', fail);
    if (list !== undefined && list.trim() === '') fail('provider.list', 'a shell command, or leave the field out');
    const timeoutSeconds = number(p.timeoutSeconds, 'provider.timeoutSeconds', fail, { min: 1, fallback: 300 });
    return { type, launch, terminate, ...(list === undefined ? {} : { list }), timeoutSeconds };
  }
  return fail('provider.type', `expected local or command (got ${JSON.stringify(type)})`);
}

function nodeTypeOf(name: string, raw: unknown, fail: (field: string, rule: string) => never): NodeTypeConfig {
  const at = `nodeTypes.${name}`;
  if (!TYPE_NAME.test(name)) fail(at, 'a node type name is 1-32 lowercase letters, digits and -, starting and ending with a letter or digit');
  const t = object(raw, at, fail);
  for (const key of Object.keys(t)) if (!TYPE_KEYS.includes(key)) fail(`${at}.${key}`, `unknown field (expected one of ${TYPE_KEYS.join(', ')})`);
  const resources = object(t.resources, `${at}.resources`, fail) as Record<string, number>;
  let units;
  try {
    units = parseResources(resources, `${at}.resources`);
  } catch (err) {
    return fail(`${at}.resources`, (err as Error).message);
  }
  if (Object.keys(units).length === 0) fail(`${at}.resources`, 'a node type needs some resource (CPU: 4)');
  const labels = t.labels === undefined ? {} : (object(t.labels, `${at}.labels`, fail) as Record<string, string>);
  try {
    validateLabels(labels);
  } catch (err) {
    fail(`${at}.labels`, (err as Error).message);
  }
  if (Object.hasOwn(labels, NODE_GROUP_LABEL)) fail(`${at}.labels`, `${NODE_GROUP_LABEL} is set by the autoscaler to the type's name`);
  const taintRecord = t.taints === undefined ? {} : (object(t.taints, `${at}.taints`, fail) as Record<string, string>);
  let taints;
  try {
    for (const [k, v] of Object.entries(taintRecord)) if (typeof v !== 'string') fail(`${at}.taints.${k}`, `expected a string such as "true" or "true:NoSchedule" (got ${JSON.stringify(v)})`);
    taints = parseTaints(taintRecord);
  } catch (err) {
    if (err instanceof InvalidConfigError) throw err;
    return fail(`${at}.taints`, (err as Error).message);
  }
  const minWorkers = number(t.minWorkers, `${at}.minWorkers`, fail, { min: 0, int: true, fallback: 0 });
  const maxWorkers = number(t.maxWorkers, `${at}.maxWorkers`, fail, { min: 0, int: true, fallback: Math.max(minWorkers, 1) });
  if (maxWorkers < minWorkers) fail(`${at}.maxWorkers`, `must be at least minWorkers (${maxWorkers} < ${minWorkers})`);
  const cost = t.cost === undefined ? undefined : number(t.cost, `${at}.cost`, fail, { min: 0 });
  const type: NodeType = { name, resources: units, labels, taints, minWorkers, maxWorkers, ...(cost !== undefined ? { cost } : {}) };
  return { name, resources, labels, taints: taintRecord, minWorkers, maxWorkers, ...(cost !== undefined ? { cost } : {}), type };
}

function object(v: unknown, field: string, fail: (field: string, rule: string) => never): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return fail(field, `expected a mapping (got ${describe(v)})`);
  return v as Record<string, unknown>;
}

function string(v: unknown, field: string, fail: (field: string, rule: string) => never): string {
  if (typeof v !== 'string') return fail(field, `expected a string (got ${describe(v)})`);
  return v;
}

function number(v: unknown, field: string, fail: (field: string, rule: string) => never, o: { min: number; int?: boolean; fallback?: number }): number {
  if (v === undefined && o.fallback !== undefined) return o.fallback;
  if (typeof v !== 'number' || !Number.isFinite(v)) return fail(field, `expected a number (got ${describe(v)})`);
  if (o.int && !Number.isInteger(v)) fail(field, `expected a whole number (got ${v})`);
  if (v < o.min) fail(field, `must be at least ${o.min} (got ${v})`);
  return v;
}

function describe(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'a mapping' : JSON.stringify(v);
}
