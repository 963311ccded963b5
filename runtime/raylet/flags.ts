import { readFileSync, statSync } from 'node:fs';
import { delimiter, resolve } from 'node:path';
import { composeLabels, parseLabelsFlag, parseLabelsYaml } from '../../lib/labels/parse.ts';
import { labelValueProblem } from '../../lib/labels/validate.ts';
import { parseResources } from '../../lib/resources/resource-set.ts';
import { parseTaints } from '../../lib/scheduling/taints.ts';
import { assertToken } from '../../protocols/subjects.ts';
import { ACCESS_FLAGS, ACCESS_USAGE, accessFlags, addressFlag, CONNECT_WAIT_FLAG, CONNECT_WAIT_USAGE, connectWaitFlag, DEFAULT_ADDRESS, FlagError, scanFlags, type NatsAccess } from '../process/flags.ts';

export { DEFAULT_ADDRESS, FlagError };

export interface RayletFlags {
  address: string;
  /** Credentials and TLS for the NATS connection (the raylet's and its worker hosts'). */
  access: NatsAccess;
  /** How long to keep trying a NATS server that does not answer yet (seconds; 0: give up at once). */
  connectWaitSeconds: number;
  cluster: string;
  nodeName?: string;
  nodeIp?: string;
  labels: Record<string, string>;
  taints: Record<string, string>;
  /** User-facing quantities; CPU only when --num-cpus or --resources gave it. */
  resources: Record<string, number>;
  /** Directories worker hosts load code from (absolute); empty: any file: URL. */
  codeRoots: string[];
  /** The task queue's bounds; undefined: the raylet's defaults. */
  maxQueuedTasks?: number;
  maxQueuedTaskBytes?: number;
  help: boolean;
}


export const USAGE = `usage: raylet [--address URL] [--cluster NAME] [--node-name NAME] [--node-ip IP]
              [--labels "k=v,…"] [--labels-file FILE.yaml] [--taints "k=v[:Effect],…"]
              [--resources '{"GPU":1}'] [--num-cpus N] [--num-gpus N] [--code-root DIR[${delimiter}DIR…]]
              [--max-queued-tasks N] [--max-queued-task-bytes N]
              [--creds FILE] [--tls-ca FILE] [--tls-cert FILE --tls-key FILE] [--connect-wait SECONDS]
  --address defaults to $ORRERY_ADDRESS, then ${DEFAULT_ADDRESS}; labels also come from $ORRERY_NODE_LABELS
  --code-root: actors and tasks load only from files under these directories (default $ORRERY_CODE_ROOTS; none: any file)
  --max-queued-tasks, --max-queued-task-bytes: the most tasks (default 100000) and bytes of them (default
      268435456) waiting in this raylet's queue; past them a task is refused and its driver submits it
      again later (default $ORRERY_MAX_QUEUED_TASKS, $ORRERY_MAX_QUEUED_TASK_BYTES)
${ACCESS_USAGE}
${CONNECT_WAIT_USAGE}`;

const VALUE_FLAGS = new Set(['--address', '--cluster', '--node-name', '--node-ip', '--labels', '--labels-file', '--taints', '--resources', '--num-cpus', '--num-gpus', '--code-root', '--max-queued-tasks', '--max-queued-task-bytes', CONNECT_WAIT_FLAG, ...ACCESS_FLAGS]);

/** Parses the raylet's flags and environment; every problem is a FlagError naming its flag. */
export function parseRayletFlags(argv: readonly string[], env: NodeJS.ProcessEnv): RayletFlags {
  const { given, help } = scanFlags(argv, VALUE_FLAGS);
  const at = <T>(flag: string, parse: () => T): T => {
    try {
      return parse();
    } catch (err) {
      throw err instanceof FlagError ? err : new FlagError(flag, err instanceof Error ? err.message : String(err));
    }
  };

  const address = addressFlag(given, env);
  const cluster = at('--cluster', () => assertToken('cluster', given.get('--cluster') ?? 'default'));
  const nodeName = given.get('--node-name');
  if (nodeName !== undefined) {
    const problem = nodeName === '' ? 'must not be empty' : labelValueProblem(nodeName);
    if (problem) throw new FlagError('--node-name', problem);
  }
  const nodeIp = given.get('--node-ip');
  if (nodeIp !== undefined && !/^[0-9a-fA-F.:]+$/.test(nodeIp)) throw new FlagError('--node-ip', `not an IP address: ${JSON.stringify(nodeIp)}`);

  const fromFlag = at('--labels', () => parseLabelsFlag(given.get('--labels') ?? ''));
  const file = given.get('--labels-file');
  const fromFile = file === undefined ? undefined : at('--labels-file', () => parseLabelsYaml(readLabelsFile(file)));
  const fromEnv = at('ORRERY_NODE_LABELS', () => parseLabelsFlag(env.ORRERY_NODE_LABELS ?? ''));
  const labels = { ...composeLabels(fromFile, fromFlag, fromEnv) };

  const taints = at('--taints', () => parseTaintsFlag(given.get('--taints') ?? ''));
  const resources = at('--resources', () => parseResourcesFlag(given.get('--resources')));
  for (const [flag, name] of [['--num-cpus', 'CPU'], ['--num-gpus', 'GPU']] as const) {
    const text = given.get(flag);
    if (text === undefined) continue;
    if (Object.hasOwn(resources, name)) throw new FlagError(flag, `--resources also sets ${name}; give it once`);
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw new FlagError(flag, `expected a number, got ${JSON.stringify(text)}`);
    at(flag, () => parseResources({ [name]: n }));
    resources[name] = n;
  }
  const rootsFlag = given.get('--code-root');
  const codeRoots = rootsFlag !== undefined ? at('--code-root', () => parseCodeRoots(rootsFlag)) : at('ORRERY_CODE_ROOTS', () => parseCodeRoots(env.ORRERY_CODE_ROOTS ?? ''));
  const access = accessFlags(given, env);
  const count = (flag: string, name: string): number | undefined => {
    const text = given.get(flag);
    return text !== undefined ? at(flag, () => positiveCount(text)) : at(name, () => positiveCount(env[name]));
  };
  const maxQueuedTasks = count('--max-queued-tasks', 'ORRERY_MAX_QUEUED_TASKS');
  const maxQueuedTaskBytes = count('--max-queued-task-bytes', 'ORRERY_MAX_QUEUED_TASK_BYTES');
  const connectWaitSeconds = connectWaitFlag(given, env);
  return { address, access, connectWaitSeconds, cluster, nodeName, nodeIp, labels, taints, resources, codeRoots, maxQueuedTasks, maxQueuedTaskBytes, help };
}

/** A whole number of at least 1, written in decimal digits; undefined when not given. */
export function positiveCount(text: string | undefined): number | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const n = Number(text.trim());
  if (!/^[0-9]+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) throw new Error(`expected a whole number of at least 1, got ${JSON.stringify(text)}`);
  return n;
}

/**
 * `DIR[:DIR…]` (the platform's path list separator, as in PATH): each an existing directory, made
 * absolute against the working directory. Empty: no roots.
 */
export function parseCodeRoots(text: string): string[] {
  const roots: string[] = [];
  for (const part of text.split(delimiter)) {
    if (part.trim() === '') continue;
    const dir = resolve(part.trim());
    let isDir = false;
    try {
      isDir = statSync(dir).isDirectory();
    } catch {
      throw new Error(`no such directory: ${dir}`);
    }
    if (!isDir) throw new Error(`not a directory: ${dir}`);
    roots.push(dir);
  }
  return roots;
}

function readLabelsFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as { code?: string }).code;
    throw new FlagError('--labels-file', code === 'ENOENT' ? `no such file: ${path}` : `cannot read ${path}: ${(err as Error).message}`);
  }
}

/** `k=v,k2=v2:PreferNoSchedule`: each pair split at its first '=', checked by parseTaints. */
export function parseTaintsFlag(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (text.trim() === '') return out;
  for (const raw of text.split(',')) {
    const pair = raw.trim();
    const eq = pair.indexOf('=');
    if (pair === '') throw new Error("empty key=value pair (a stray ',')");
    if (eq < 0) throw new Error(`expected key=value[:Effect], got ${JSON.stringify(pair)}`);
    const key = pair.slice(0, eq).trim();
    if (Object.hasOwn(out, key)) throw new Error(`duplicate key ${JSON.stringify(key)}`);
    out[key] = pair.slice(eq + 1).trim();
  }
  parseTaints(out);
  return out;
}

function parseResourcesFlag(text: string | undefined): Record<string, number> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`expected a JSON object such as '{"GPU":1}', got ${JSON.stringify(text)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`expected a JSON object such as '{"GPU":1}', got ${JSON.stringify(text)}`);
  parseResources(value);
  return { ...(value as Record<string, number>) };
}
