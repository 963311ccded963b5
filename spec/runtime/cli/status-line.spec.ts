// The line `orrery status` prints first: what the GCS is doing, from gcs_status — serving, or how far
// a recovery is and what the tables below it wait for.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gcsStatusLine } from '../../../runtime/cli/commands/status.ts';

test('a serving GCS: its leader epoch, or that it runs without a lease', () => {
  assert.is(gcsStatusLine({ epoch: 3, state: 'SERVING' }), 'serving (leader epoch 3)');
  assert.is(gcsStatusLine({ epoch: 0, state: 'SERVING' }), 'serving (no leader lease)');
  assert.is(gcsStatusLine({ epoch: 3, state: 'STOPPING' }), 'stopping (leader epoch 3)');
});

test('a recovering GCS: the nodes back of those it expects, the longest it still waits (in seconds), and that the tables wait for it', () => {
  assert.is(
    gcsStatusLine({ epoch: 4, state: 'RECOVERING', recovering: { phase: 'WAITING', nodesExpected: 2, nodesBack: 1, graceLeftMs: 7_240 } }),
    'recovering what an earlier GCS left (leader epoch 4): 1 of 2 node(s) back; waiting at most 7.2 s more for the rest, then rebuilding its tables from what came back — the tables below follow once it serves',
  );
  assert.is(
    gcsStatusLine({ epoch: 4, state: 'RECOVERING', recovering: { phase: 'RECONCILING', nodesExpected: 2, nodesBack: 2, graceLeftMs: 0 } }),
    'recovering what an earlier GCS left (leader epoch 4): 2 of 2 node(s) back; rebuilding its tables from what came back — the tables below follow once it serves',
  );
});

test.run();
