// The autoscaler in `orrery status` (as `ray status` shows it) and its events in `orrery events`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AutoscalerStatus } from '../../../protocols/messages/autoscaling.ts';
import { autoscalerLines, duration } from '../../../runtime/cli/autoscaler-format.ts';
import { describeEvent } from '../../../runtime/cli/event-format.ts';
import type { AutoscalerClusterEvent } from '../../../runtime/client/cluster-info.types.ts';

const T = 1_700_000_000_000;
const status: AutoscalerStatus = {
  time: T,
  nodeTypes: [
    { name: 'cpu', live: 1, launching: 0, minWorkers: 1, maxWorkers: 4 },
    { name: 'gpu-a100', live: 0, launching: 1, minWorkers: 0, maxWorkers: 2 },
  ],
  launching: [{ type: 'gpu-a100', name: 'gpu-a100-1a2b', since: T - 3_000 }],
  demands: [
    { description: '{CPU: 1} labelSelector {type: gpu}', count: 2, launch: [{ type: 'gpu-a100', count: 1 }] },
    { description: '{CPU: 1}', count: 3 },
  ],
  infeasible: [{ description: '{GPU: 8}', count: 1, reason: 'no node type has 8 GPU' }],
  failures: [{ type: 'gpu-a100', message: 'launch command exited 1', time: T - 40_000, retryAt: T + 20_000 }],
};

test('no autoscaler: one line', () => {
  assert.equal(autoscalerLines({ status: null }), ['Autoscaler: not running']);
});

test('a report: when it came, node types, pending launches, demands with their launches, infeasible demands with why, failures', () => {
  assert.equal(autoscalerLines({ status, ageMs: 2_000 }), [
    'Autoscaler (reported 2s ago)',
    '  Node types:',
    '    cpu       live 1  launching 0  min 1  max 4',
    '    gpu-a100  live 0  launching 1  min 0  max 2',
    '  Pending launches:',
    '    gpu-a100-1a2b (gpu-a100), requested 5s ago',
    '  Demands:',
    '    2 × {CPU: 1} labelSelector {type: gpu}: launching 1 gpu-a100',
    '    3 × {CPU: 1}: no launch',
    '  Infeasible demands:',
    '    1 × {GPU: 8}: no node type has 8 GPU',
    '  Recent failures:',
    '    gpu-a100: launch command exited 1 (42s ago, retry in 18s)',
  ]);
});

test('empty sections say so; no infeasible section when there is none; a retry that is due says retrying', () => {
  const quiet = { ...status, nodeTypes: [], launching: [], demands: [], infeasible: [], failures: [{ type: 'cpu', message: 'm', time: T - 1_000, retryAt: T - 1 }] };
  assert.equal(autoscalerLines({ status: quiet, ageMs: 0 }), [
    'Autoscaler (reported 0s ago)',
    '  Node types:',
    '    (none)',
    '  Pending launches:',
    '    (none)',
    '  Demands:',
    '    (none)',
    '  Recent failures:',
    '    cpu: m (1s ago, retrying)',
  ]);
});

const durations: [number, string][] = [[0, '0s'], [499, '0s'], [42_000, '42s'], [185_000, '3m 5s'], [7_800_000, '2h 10m'], [-5, '0s']];
for (const [ms, text] of durations) test(`duration(${ms}) is ${text}`, () => assert.is(duration(ms), text));

const event = (over: Partial<AutoscalerClusterEvent>): AutoscalerClusterEvent => ({ type: 'node_launch_requested', time: T, seq: 7, nodeType: 'gpu', message: 'launching gpu-1a2b (1 of 2) for 1 pending actor', ...over });

const lines: [string, AutoscalerClusterEvent, string][] = [
  ['a launch request', event({}), '2023-11-14T22:13:20.000Z  node_launch_requested  gpu:  launching gpu-1a2b (1 of 2) for 1 pending actor'],
  ['a launch, its node id named in the message', event({ type: 'node_launched', nodeName: 'gpu-1a2b', nodeId: 'n9', message: 'gpu-1a2b registered as n9' }), '2023-11-14T22:13:20.000Z  node_launched        gpu:  gpu-1a2b registered as n9'],
  ['a termination, the node id added', event({ type: 'node_terminated', nodeName: 'gpu-1a2b', nodeId: 'n9', message: 'gpu-1a2b idle for 60s' }), '2023-11-14T22:13:20.000Z  node_terminated      gpu:  gpu-1a2b idle for 60s (node n9)'],
  ['an infeasible demand', event({ type: 'demand_infeasible', nodeType: 'any', message: '1 actor needs {GPU: 8}: no node type has 8 GPU' }), '2023-11-14T22:13:20.000Z  demand_infeasible    any:  1 actor needs {GPU: 8}: no node type has 8 GPU'],
];
for (const [name, e, line] of lines) test(`orrery events prints ${name} readably`, () => assert.is(describeEvent(e), line));

test.run();
