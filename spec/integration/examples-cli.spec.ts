// The README's Quickstart and every example that runs on a cluster, as a user runs them against a
// cluster started with the CLI (issue 15): a nats-server of its own, `orrery start --head` and
// `orrery start` from the compiled package on plain node — one per node the example describes
// (examples/support/nodes.ts), labels, resources and taints as flags — then the example's npm
// script with ORRERY_ADDRESS. Each must exit 0 with no actor DEAD. Needs dist/ (npm ci builds it).
// example:autoscaling runs its autoscaler against the CLI's head (a node with no CPU, so the demand
// launches nodes); it kills its actors at the end on purpose, so it is judged by its exit code and
// its last line. Not here: example:scheduling, the scheduling library alone, with no cluster.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { NodeSpec } from '../../runtime/index.ts';
import { EXAMPLE_NODES, type ExampleName } from '../../examples/support/nodes.ts';
import { startNatsServer } from '../helpers/nats-server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DIST_CLI = join(ROOT, 'dist/runtime/cli/main.js');

/** `orrery start` flags for one node. */
function nodeFlags(node: NodeSpec): string[] {
  const { CPU, GPU, ...custom } = node.resources ?? {};
  const flags = ['--node-name', node.name!];
  if (node.labels && Object.keys(node.labels).length > 0) flags.push('--labels', Object.entries(node.labels).map(([k, v]) => `${k}=${v}`).join(','));
  if (node.taints && Object.keys(node.taints).length > 0) flags.push('--taints', Object.entries(node.taints).map(([k, v]) => `${k}=${v}`).join(','));
  if (CPU !== undefined) flags.push('--num-cpus', String(CPU));
  if (GPU !== undefined) flags.push('--num-gpus', String(GPU));
  if (Object.keys(custom).length > 0) flags.push('--resources', JSON.stringify(custom));
  return flags;
}

interface Run {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    // plain node for the CLI, as an installed orrery runs: nothing inherited from this tsx process
    const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => resolve({ code, output }));
  });
}

const orrery = (args: string[], env: NodeJS.ProcessEnv): Promise<Run> => run(process.execPath, [DIST_CLI, ...args], env);

interface Example {
  readonly script: string;
  readonly nodes: NodeSpec[];
  /** It kills its own actors at the end (DEAD in its output is not a failure); and the line it must end with. */
  readonly killsItsActors?: { lastLine: RegExp };
}

const EXAMPLES: Example[] = ([

  ['start', 'quickstart'],
  ['example:actor-affinity', 'actor-affinity'],
  ['example:node-affinity', 'node-affinity'],
  ['example:label-selector', 'label-selector'],
  ['example:gpu-taint', 'gpu-taint'],
  ['example:parameter-server', 'parameter-server'],
  ['example:pipeline', 'pipeline'],
] as [string, ExampleName][]).map(([script, name]): Example => ({ script, nodes: EXAMPLE_NODES[name] }));
EXAMPLES.push({ script: 'example:autoscaling', nodes: [{ name: 'head', resources: { CPU: 0 } }], killsItsActors: { lastLine: /every launched node is gone/ } });

test.before(() => {
  assert.ok(existsSync(DIST_CLI), `${DIST_CLI} is missing: run npm run build`);
});

for (const { script, nodes, killsItsActors } of EXAMPLES) {
  test(`npm run ${script} against a cluster started with orrery start (${nodes.length} node${nodes.length === 1 ? '' : 's'})`, async () => {
    const server = await startNatsServer({ jetstream: true });
    const runDir = mkdtempSync(join(tmpdir(), `orrery-example-${script.replace(/\W/g, '-')}-`));
    const env = { ORRERY_RUN_DIR: runDir, ORRERY_ADDRESS: server.url };
    try {
      const [head, ...rest] = nodes;
      const started = await orrery(['start', '--head', '--address', server.url, ...nodeFlags(head!)], env);
      assert.is(started.code, 0, `orrery start --head: ${started.output}`);
      for (const node of rest) {
        const joined = await orrery(['start', '--address', server.url, ...nodeFlags(node)], env);
        assert.is(joined.code, 0, `orrery start ${node.name}: ${joined.output}`);
      }
      const example = await run('npm', ['run', '--silent', script], env);
      assert.is(example.code, 0, `npm run ${script} exited ${example.code}:\n${example.output}`);
      assert.match(example.output, `connected to ${server.url}`, 'it ran against the CLI cluster, not one of its own');
      if (killsItsActors) assert.match(example.output.trimEnd().split('\n').at(-1) ?? '', killsItsActors.lastLine, example.output);
      else assert.not.match(example.output, /\bDEAD\b/, `an actor died:\n${example.output}`);
    } finally {
      await orrery(['stop'], env);
      await server.stop();
      rmSync(runDir, { recursive: true, force: true });
    }
  });
}

test.run();
