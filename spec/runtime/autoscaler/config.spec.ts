// The autoscaler's cluster config: defaults, and every bad field as one line naming it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidConfigError, parseAutoscalerConfig } from '../../../runtime/autoscaler/config.ts';

const ISSUE_EXAMPLE = `
cluster: default
provider: { type: local }
idleTimeoutSeconds: 60
maxConcurrentLaunches: 4
nodeTypes:
  cpu: { resources: { CPU: 4 }, labels: { type: cpu }, minWorkers: 1, maxWorkers: 4 }
  gpu: { resources: { CPU: 4, GPU: 1 }, labels: { type: gpu, orrery.io/accelerator-type: A100 },
         taints: { gpu_node: "true" }, minWorkers: 0, maxWorkers: 2 }
`;

test('the example of the issue parses, in user quantities and in units', () => {
  const c = parseAutoscalerConfig(ISSUE_EXAMPLE);
  assert.is(c.cluster, 'default');
  assert.equal(c.provider, { type: 'local' });
  assert.is(c.idleTimeoutSeconds, 60);
  assert.is(c.maxConcurrentLaunches, 4);
  const gpu = c.nodeTypes.find((t) => t.name === 'gpu')!;
  assert.equal(gpu.resources, { CPU: 4, GPU: 1 });
  assert.equal(gpu.type.resources, { CPU: 40_000, GPU: 10_000 });
  assert.equal(gpu.type.taints, [{ key: 'gpu_node', value: 'true', effect: 'NoSchedule' }]);
  assert.equal(gpu.labels, { type: 'gpu', 'orrery.io/accelerator-type': 'A100' });
  assert.is(gpu.maxWorkers, 2);
});

test('defaults: local provider, 60 s idle, 4 launches, 120 s to register, 2 s rounds, maxWorkers ≥ 1', () => {
  const c = parseAutoscalerConfig('nodeTypes:\n  cpu: { resources: { CPU: 2 } }\n');
  assert.equal(
    { cluster: c.cluster, provider: c.provider, idle: c.idleTimeoutSeconds, launches: c.maxConcurrentLaunches, timeout: c.launchTimeoutSeconds, interval: c.updateIntervalSeconds },
    { cluster: 'default', provider: { type: 'local' }, idle: 60, launches: 4, timeout: 120, interval: 2 },
  );
  assert.equal([c.nodeTypes[0].minWorkers, c.nodeTypes[0].maxWorkers], [0, 1]);
});

test('a command provider keeps its commands', () => {
  const c = parseAutoscalerConfig('provider: { type: command, launch: "vm create $ORRERY_NODE_NAME", terminate: "vm rm $ORRERY_NODE_NAME" }\nnodeTypes:\n  cpu: { resources: { CPU: 2 } }\n');
  assert.equal(c.provider, { type: 'command', launch: 'vm create $ORRERY_NODE_NAME', terminate: 'vm rm $ORRERY_NODE_NAME', timeoutSeconds: 300 });
  const listed = parseAutoscalerConfig('provider: { type: command, launch: "a", terminate: "b", list: "vm ls --cluster $ORRERY_CLUSTER" }\nnodeTypes:\n  cpu: { resources: { CPU: 2 } }\n');
  assert.equal(listed.provider, { type: 'command', launch: 'a', terminate: 'b', list: 'vm ls --cluster $ORRERY_CLUSTER', timeoutSeconds: 300 });
});

const bad: [string, string, RegExp][] = [
  ['not YAML', 'nodeTypes: [', /^\(document\): not valid YAML/],
  ['no node types', 'cluster: x\n', /^nodeTypes: required/],
  ['an unknown top-level field', 'nodeType: {}\n', /^nodeType: unknown field/],
  ['an unknown provider', 'provider: { type: aws }\nnodeTypes:\n  a: { resources: { CPU: 1 } }\n', /^provider\.type: expected local or command \(got "aws"\)/],
  ['a command provider without terminate', 'provider: { type: command, launch: "x" }\nnodeTypes:\n  a: { resources: { CPU: 1 } }\n', /^provider\.terminate: expected a string \(got nothing\)/],
  ['an empty list command', 'provider: { type: command, launch: "x", terminate: "y", list: " " }\nnodeTypes:\n  a: { resources: { CPU: 1 } }\n', /^provider\.list: a shell command, or leave the field out/],
  ['a list command that is not a string', 'provider: { type: command, launch: "x", terminate: "y", list: [ls] }\nnodeTypes:\n  a: { resources: { CPU: 1 } }\n', /^provider\.list: expected a string/],
  ['an unknown command provider field', 'provider: { type: command, launch: "x", terminate: "y", lst: "z" }\nnodeTypes:\n  a: { resources: { CPU: 1 } }\n', /^provider\.lst: unknown field \(expected launch, terminate, list, timeoutSeconds\)/],
  ['a bad type name', 'nodeTypes:\n  GPU_Big: { resources: { CPU: 1 } }\n', /^nodeTypes\.GPU_Big: a node type name is/],
  ['no resources', 'nodeTypes:\n  a: { labels: { x: y } }\n', /^nodeTypes\.a\.resources: expected a mapping \(got nothing\)/],
  ['a negative resource', 'nodeTypes:\n  a: { resources: { CPU: -1 } }\n', /^nodeTypes\.a\.resources: /],
  ['a bad label value', 'nodeTypes:\n  a: { resources: { CPU: 1 }, labels: { zone: "has space" } }\n', /^nodeTypes\.a\.labels: /],
  ['the node-group label set by hand', 'nodeTypes:\n  a: { resources: { CPU: 1 }, labels: { orrery.io/node-group: b } }\n', /^nodeTypes\.a\.labels: orrery\.io\/node-group is set by the autoscaler/],
  ['a taint with a bad effect', 'nodeTypes:\n  a: { resources: { CPU: 1 }, taints: { gpu: "true:Never" } }\n', /^nodeTypes\.a\.taints: .*effect must be one of/],
  ['a taint that is not a string', 'nodeTypes:\n  a: { resources: { CPU: 1 }, taints: { gpu: true } }\n', /^nodeTypes\.a\.taints\.gpu: expected a string/],
  ['maxWorkers below minWorkers', 'nodeTypes:\n  a: { resources: { CPU: 1 }, minWorkers: 3, maxWorkers: 2 }\n', /^nodeTypes\.a\.maxWorkers: must be at least minWorkers \(2 < 3\)/],
  ['a fractional minWorkers', 'nodeTypes:\n  a: { resources: { CPU: 1 }, minWorkers: 1.5 }\n', /^nodeTypes\.a\.minWorkers: expected a whole number/],
  ['zero launches at a time', 'maxConcurrentLaunches: 0\nnodeTypes:\n  a: { resources: { CPU: 1 } }\n', /^maxConcurrentLaunches: must be at least 1/],
  ['an unknown node-type field', 'nodeTypes:\n  a: { resources: { CPU: 1 }, max_workers: 2 }\n', /^nodeTypes\.a\.max_workers: unknown field/],
];
for (const [name, yaml, want] of bad) {
  test(`bad config: ${name}`, () => {
    try {
      parseAutoscalerConfig(yaml);
      assert.unreachable('accepted');
    } catch (err) {
      assert.instance(err, InvalidConfigError);
      assert.is((err as InvalidConfigError).code, 'INVALID_CONFIG');
      assert.is((err as Error).message.split('\n').length, 1);
      assert.match((err as Error).message, want);
    }
  });
}

test('the file name leads the line when given', () => {
  assert.throws(() => parseAutoscalerConfig('cluster: 3\nnodeTypes: {}', 'c.yaml'), (e: Error) => e.message === 'c.yaml: cluster: expected a string (got 3)');
});

test.run();
