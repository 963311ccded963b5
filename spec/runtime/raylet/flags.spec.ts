import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_ADDRESS, FlagError, parseRayletFlags } from '../../../runtime/raylet/flags.ts';

const dir = mkdtempSync(join(tmpdir(), 'orrery-flags-'));
const labelsFile = join(dir, 'labels.yaml');
writeFileSync(labelsFile, 'zone: file\nrack: "007"\nversion: 1.10\n');
const codeDir = join(dir, 'code');
mkdirSync(codeDir);

const ok: { name: string; argv: string[]; env?: Record<string, string>; want: Partial<ReturnType<typeof parseRayletFlags>> }[] = [
  { name: 'defaults', argv: [], want: { address: DEFAULT_ADDRESS, cluster: 'default', labels: {}, taints: {}, resources: {} } },
  { name: 'address from env', argv: [], env: { ORRERY_ADDRESS: 'nats://h:1' }, want: { address: 'nats://h:1' } },
  { name: 'flag beats env', argv: ['--address', 'nats://a:2'], env: { ORRERY_ADDRESS: 'nats://h:1' }, want: { address: 'nats://a:2' } },
  { name: '--flag=value form', argv: ['--cluster=prod', '--node-name=n-1'], want: { cluster: 'prod', nodeName: 'n-1' } },
  {
    name: 'labels: file < env < flag',
    argv: ['--labels-file', labelsFile, '--labels', 'zone=flag,a=1'],
    env: { ORRERY_NODE_LABELS: 'zone=env,b=2' },
    want: { labels: { zone: 'flag', rack: '007', version: '1.10', a: '1', b: '2' } },
  },
  { name: 'taints with effects', argv: ['--taints', 'gpu=yes, pressure=high:PreferNoSchedule'], want: { taints: { gpu: 'yes', pressure: 'high:PreferNoSchedule' } } },
  { name: 'resources', argv: ['--resources', '{"GPU":1,"my_res":2.5}', '--num-cpus', '4'], want: { resources: { GPU: 1, my_res: 2.5, CPU: 4 } } },
  { name: 'cpus and gpus', argv: ['--num-cpus', '0.5', '--num-gpus', '2'], want: { resources: { CPU: 0.5, GPU: 2 } } },
  { name: 'help', argv: ['--help'], want: { help: true } },
  { name: 'no code roots by default', argv: [], want: { codeRoots: [] } },
  { name: 'code roots, made absolute', argv: ['--code-root', `${dir}${delimiter}${relative(process.cwd(), codeDir)}`], want: { codeRoots: [dir, codeDir] } },
  { name: 'code roots from env', argv: [], env: { ORRERY_CODE_ROOTS: codeDir }, want: { codeRoots: [codeDir] } },
  { name: 'code roots: flag beats env', argv: ['--code-root', dir], env: { ORRERY_CODE_ROOTS: codeDir }, want: { codeRoots: [dir] } },
  { name: "the task queue's bounds: the raylet's defaults", argv: [], want: { maxQueuedTasks: undefined, maxQueuedTaskBytes: undefined } },
  { name: "the task queue's bounds", argv: ['--max-queued-tasks', '500', '--max-queued-task-bytes=1048576'], want: { maxQueuedTasks: 500, maxQueuedTaskBytes: 1048576 } },
  { name: "the task queue's bounds from env; the flag beats it", argv: ['--max-queued-tasks', '7'], env: { ORRERY_MAX_QUEUED_TASKS: '9', ORRERY_MAX_QUEUED_TASK_BYTES: '4096' }, want: { maxQueuedTasks: 7, maxQueuedTaskBytes: 4096 } },
];

for (const c of ok) {
  test(`parses: ${c.name}`, () => {
    const got = parseRayletFlags(c.argv, c.env ?? {});
    for (const [k, v] of Object.entries(c.want)) assert.equal(got[k as keyof typeof got], v, k);
  });
}

const bad: { argv: string[]; env?: Record<string, string>; flag: string; problem: RegExp }[] = [
  { argv: ['--nope'], flag: '--nope', problem: /unknown flag/ },
  { argv: ['positional'], flag: 'positional', problem: /unexpected argument/ },
  { argv: ['--labels'], flag: '--labels', problem: /needs a value/ },
  { argv: ['--labels', '--num-cpus', '1'], flag: '--labels', problem: /needs a value/ },
  { argv: ['--cluster', 'a', '--cluster', 'b'], flag: '--cluster', problem: /more than once/ },
  { argv: ['--cluster', 'a.b'], flag: '--cluster', problem: /invalid subject cluster/ },
  { argv: ['--node-name', '-x-'], flag: '--node-name', problem: /alphanumeric/ },
  { argv: ['--node-name='], flag: '--node-name', problem: /must not be empty/ },
  { argv: ['--node-ip', 'example.com'], flag: '--node-ip', problem: /not an IP address/ },
  { argv: ['--labels', 'a'], flag: '--labels', problem: /key=value/ },
  { argv: ['--labels', 'orrery.io/zone=x'], flag: '--labels', problem: /orrery\.io/ },
  { argv: [], env: { ORRERY_NODE_LABELS: 'a=b,,' }, flag: 'ORRERY_NODE_LABELS', problem: /stray/ },
  { argv: ['--labels-file', join(dir, 'missing.yaml')], flag: '--labels-file', problem: /no such file/ },
  { argv: ['--taints', 'a'], flag: '--taints', problem: /key=value/ },
  { argv: ['--taints', 'a=b,a=c'], flag: '--taints', problem: /duplicate key/ },
  { argv: ['--taints', 'a=b:Maybe'], flag: '--taints', problem: /effect/ },
  { argv: ['--resources', '{"GPU":-1}'], flag: '--resources', problem: /negative/ },
  { argv: ['--resources', '7'], flag: '--resources', problem: /JSON object/ },
  { argv: ['--num-cpus', 'x'], flag: '--num-cpus', problem: /expected a number/ },
  { argv: ['--num-gpus', '-1'], flag: '--num-gpus', problem: /negative/ },
  { argv: ['--resources', '{"CPU":1}', '--num-cpus', '2'], flag: '--num-cpus', problem: /--resources also sets CPU/ },
  { argv: ['--code-root', join(dir, 'missing')], flag: '--code-root', problem: /no such directory/ },
  { argv: ['--code-root', labelsFile], flag: '--code-root', problem: /not a directory/ },
  { argv: ['--code-root'], flag: '--code-root', problem: /needs a value/ },
  { argv: [], env: { ORRERY_CODE_ROOTS: join(dir, 'missing') }, flag: 'ORRERY_CODE_ROOTS', problem: /no such directory/ },
  { argv: ['--max-queued-tasks', '0'], flag: '--max-queued-tasks', problem: /whole number of at least 1/ },
  { argv: ['--max-queued-tasks', '1.5'], flag: '--max-queued-tasks', problem: /whole number/ },
  { argv: ['--max-queued-task-bytes', '1e9'], flag: '--max-queued-task-bytes', problem: /whole number/ },
  { argv: ['--max-queued-task-bytes', '-5'], flag: '--max-queued-task-bytes', problem: /whole number/ },
  { argv: [], env: { ORRERY_MAX_QUEUED_TASKS: 'lots' }, flag: 'ORRERY_MAX_QUEUED_TASKS', problem: /whole number/ },
];

for (const c of bad) {
  test(`refuses ${c.argv.join(' ') || JSON.stringify(c.env)} naming ${c.flag}`, () => {
    try {
      parseRayletFlags(c.argv, c.env ?? {});
      assert.unreachable();
    } catch (err) {
      assert.instance(err, FlagError);
      assert.is((err as FlagError).flag, c.flag);
      assert.match((err as FlagError).problem, c.problem);
      assert.is((err as FlagError).message.split('\n').length, 1);
      assert.ok((err as FlagError).message.startsWith(`${c.flag}: `));
    }
  });
}

test.run();
