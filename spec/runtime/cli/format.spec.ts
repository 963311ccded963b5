// What the CLI prints: tables whose columns line up with colour on, states in colour only when
// asked, the cluster's usage summed over nodes, and taints with their effect spelt out.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { NodeInfo } from '../../../runtime/client/cluster-info.types.ts';
import { clusterUse, nodeJson, stateColour, table } from '../../../runtime/cli/format.ts';

const ANSI = /\u001b\[\d+m/g;
const node = (name: string, total: Record<string, number>, available: Record<string, number>, taints: Record<string, string> = {}): NodeInfo =>
  ({ nodeId: `id-${name}`, name, state: 'ALIVE', labels: {}, taints, resources: { total, available } }) as NodeInfo;

test('a state is coloured only when colour is on: green, yellow, red; other words never', () => {
  assert.is(stateColour('ALIVE', false), 'ALIVE');
  assert.is(stateColour('ALIVE', undefined), 'ALIVE');
  assert.is(stateColour('ALIVE', true), '\u001b[32mALIVE\u001b[0m');
  assert.is(stateColour('PENDING  ', true), '\u001b[33mPENDING  \u001b[0m', 'padding kept inside');
  assert.is(stateColour('DEAD', true), '\u001b[31mDEAD\u001b[0m');
  assert.is(stateColour('Counter', true), 'Counter');
});

test('painted cells do not move the columns: without the colour codes the table is the plain one', () => {
  const rows = [['a1', 'ALIVE', 'x'], ['a22', 'RESTARTING', 'y']];
  const plain = table(['ID', 'STATE', 'DETAIL'], rows);
  const painted = table(['ID', 'STATE', 'DETAIL'], rows, (cell, column) => (column === 1 ? stateColour(cell, true) : cell));
  assert.equal(painted.map((l) => l.replace(ANSI, '')), plain);
  assert.ok(painted[1].includes('\u001b[32m'), 'painted');
  assert.is(painted[0], plain[0], 'the header is never painted');
});

test('clusterUse sums used and total over the nodes it is given, every resource any of them has', () => {
  const nodes = [node('a', { CPU: 4 }, { CPU: 1 }), node('b', { CPU: 2, GPU: 1 }, { CPU: 2, GPU: 0.5 })];
  assert.is(clusterUse(nodes), 'CPU 3/6, GPU 0.5/1');
});

test('nodeJson keeps the taint map and adds each taint with its effect, the default spelt out', () => {
  const n = nodeJson(node('a', {}, {}, { gpu: 'true', spot: 'yes:PreferNoSchedule' }));
  assert.equal(n.taints, { gpu: 'true', spot: 'yes:PreferNoSchedule' });
  assert.equal(n.taintList, [{ key: 'gpu', value: 'true', effect: 'NoSchedule' }, { key: 'spot', value: 'yes', effect: 'PreferNoSchedule' }]);
});

test.run();
