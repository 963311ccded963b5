import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { OrreryError } from '../../lib/errors.ts';
import { parseLabelsFlag, parseLabelsYaml } from '../../lib/labels/parse.ts';
import { labelValueProblem } from '../../lib/labels/validate.ts';
import { parseResources } from '../../lib/resources/resource-set.ts';
import { parseTaint } from '../../lib/scheduling/taints.ts';
import { UsageError, stringFlag, type FlagSpec, type ParsedArgs } from './args.ts';
import { positiveCount } from '../raylet/flags.ts';

/** The flags that describe a node, shared by `orrery start` and the raylet process. */
export const NODE_FLAGS = {
  labels: 'string',
  'labels-file': 'string',
  taints: 'string',
  resources: 'string',
  'num-cpus': 'string',
  'num-gpus': 'string',
  'node-name': 'string',
  'max-queued-tasks': 'string',
  'max-queued-task-bytes': 'string',
} as const satisfies FlagSpec;

/**
 * Checks every node flag before anything starts, so a bad value is one line naming the flag, and
 * returns the raylet's arguments (the same flags, with the labels file made absolute).
 */
export function nodeFlagArgs(command: string, args: ParsedArgs): string[] {
  const out: string[] = [];
  const check = (flag: keyof typeof NODE_FLAGS, validate: (value: string) => string | void): void => {
    const value = stringFlag(args, flag);
    if (value === undefined) return;
    let forward: string | void;
    try {
      forward = validate(value);
    } catch (err) {
      if (err instanceof UsageError) throw err;
      const reason = err instanceof OrreryError || err instanceof Error ? err.message : String(err);
      throw new UsageError(`${command}: --${flag}: ${firstLine(reason)}`, `--${flag}`);
    }
    out.push(`--${flag}`, forward ?? value);
  };
  check('labels', (v) => void parseLabelsFlag(v));
  check('labels-file', (v) => {
    const path = resolve(v);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      throw new Error(`cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    parseLabelsYaml(text);
    return path;
  });
  check('taints', (v) => void parseTaintsFlag(v));
  let resources: Record<string, number> = {};
  check('resources', (v) => void (resources = parseResourcesFlag(v)));
  check('num-cpus', (v) => void quantity('CPU', v, resources));
  check('num-gpus', (v) => void quantity('GPU', v, resources));
  check('node-name', (v) => {
    const problem = labelValueProblem(v);
    if (problem) throw new Error(`${JSON.stringify(v)} cannot be a node name: ${problem}`);
  });
  check('max-queued-tasks', (v) => void positiveCount(v));
  check('max-queued-task-bytes', (v) => void positiveCount(v));
  return out;
}

/** `k=v,k2=v2:NoExecute` → taints, each checked by lib's parseTaint. */
export function parseTaintsFlag(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(',')) {
    const pair = raw.trim();
    if (pair === '') throw new Error("empty key=value pair (a stray ',')");
    const eq = pair.indexOf('=');
    if (eq < 0) throw new Error(`expected key=value[:Effect], got ${JSON.stringify(pair)}`);
    const key = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (Object.hasOwn(out, key)) throw new Error(`duplicate key ${JSON.stringify(key)}`);
    parseTaint(key, value);
    out[key] = value;
  }
  return out;
}

/** A JSON object of resource name to quantity (`{"GPU":1,"my_res":2}`). */
export function parseResourcesFlag(text: string): Record<string, number> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`expected a JSON object such as '{"GPU_MEM":2}', got ${JSON.stringify(text)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`expected a JSON object of resource name to quantity, got ${JSON.stringify(text)}`);
  }
  parseResources(value, 'resources');
  return value as Record<string, number>;
}

/** --num-cpus / --num-gpus: a quantity, not also given in --resources. */
function quantity(resource: string, text: string, resources: Record<string, number>): number {
  if (Object.hasOwn(resources, resource)) throw new Error(`--resources also sets ${resource}; give it once`);
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0) throw new Error(`expected a non-negative number, got ${JSON.stringify(text)}`);
  parseResources({ [resource]: n });
  return n;
}

function firstLine(text: string): string {
  return text.split('\n')[0];
}
