// Statecharts: every machine renders offline to an SVG with one data-state box per state and its
// transitions labelled with their events.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MACHINE_TYPES, machineDefinition, renderStatechart, statePaths } from '../../runtime/inspect/statechart.ts';

const count = (text: string, needle: string): number => text.split(needle).length - 1;

test('the machine types are the inspection stream\'s', () => {
  assert.equal([...MACHINE_TYPES], ['gcs', 'node', 'raylet', 'actor', 'placement_group', 'autoscaler']);
});

for (const machine of MACHINE_TYPES) {
  test(`${machine}: every state has one data-state box, every event a labelled transition`, () => {
    const svg = renderStatechart(machine);
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" /);
    assert.ok(svg.trimEnd().endsWith('</svg>'));
    assert.not.match(svg, /https?:\/\/(?!www\.w3\.org\/2000\/svg)/, 'nothing fetched from anywhere');
    const paths = statePaths(machine);
    assert.ok(paths.length >= 3);
    for (const path of paths) assert.is(count(svg, `data-state="${path}"`), 1, path);
    assert.is(count(svg, 'data-state="'), paths.length);
    // every event the definition declares is on some transition
    const events = new Set<string>();
    const walk = (node: { transitions: Map<string, unknown>; states: Record<string, unknown> }) => {
      for (const e of node.transitions.keys()) events.add(e);
      for (const c of Object.values(node.states)) walk(c as never);
    };
    walk(machineDefinition(machine).root as never);
    for (const e of events) assert.ok(svg.includes(`data-event="${e.replace(/&/g, '&amp;')}"`), e);
    // rendering is deterministic (the dashboard and docs get the same drawing)
    assert.is(renderStatechart(machine), svg);
  });
}

test('the actor chart shows the lifecycle with readable labels', () => {
  const svg = renderStatechart('actor');
  for (const state of ['PENDING', 'onNode', 'onNode.SCHEDULED', 'onNode.ALIVE', 'RESTARTING', 'DEAD']) assert.ok(svg.includes(`data-state="${state}"`), state);
  for (const label of ['PLACED', 'CREATED [currentIncarnation]', 'FAILED [restartableFailure]', 'UNSCHEDULABLE']) assert.ok(svg.includes(`>${label}</text>`), label);
  const raylet = renderStatechart('raylet');
  for (const label of ['after heartbeat', 'done: connect', 'error: heartbeat', 'STOP']) assert.ok(raylet.includes(`>${label}</text>`), label);
  assert.ok(raylet.includes('(any state)'));
});

test('an unknown machine is a RangeError naming the choices', () => {
  assert.throws(() => renderStatechart('robot' as never), /unknown machine "robot" \(expected gcs, node, raylet, actor, placement_group, autoscaler\)/);
});

test.run();
