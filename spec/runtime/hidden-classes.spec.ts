// Objects the GCS and the raylet make for every request keep a shared hidden class once V8 has
// optimized the code that makes them. On Node.js 20 (V8 11.3) an object literal that opens with a
// spread and goes on — `{ ...event, seq }` — gets a map of its own in optimized code: making one
// costs microseconds, every later property read of it is megamorphic, and msgpack encodes it ~2.5×
// slower (docs/benchmarks.md, "Object spreads on Node.js 20"). The probe runs in a child process
// with --allow-natives-syntax and asks V8 itself (%HaveSameMap).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PROBE = fileURLToPath(new URL('../fixtures/hidden-classes/probe.ts', import.meta.url));

function runProbe(): Record<string, boolean> {
  const run = spawnSync(process.execPath, ['--allow-natives-syntax', '--conditions=source', '--import', 'tsx', PROBE], { encoding: 'utf8', timeout: 120_000 });
  assert.is(run.status, 0, `the probe failed: ${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, boolean>;
}

const result = runProbe();

test('the probe tells maps apart: a literal opening with a spread gets maps of its own on this V8', () => {
  // the control shows the probe can see the difference it tests for; a V8 that shares maps for such
  // literals too (newer than Node.js 20's) makes the rest of this suite moot, not wrong
  if (process.versions.v8.startsWith('11.')) assert.is(result.control, false);
});

test('numbered events (EventLog.append) share a hidden class', () => {
  assert.is(result.eventLogAppend, true);
});

test("a new placement group's context shares a hidden class", () => {
  assert.is(result.groupContext, true);
});

test('a placed group: its context and its bundles share hidden classes', () => {
  assert.is(result.groupPlacedContext, true);
  assert.is(result.groupPlacedBundle, true);
});

test("a raylet's answers with their secret share a hidden class", () => {
  assert.is(result.rayletAnswer, true);
});

test.run();
