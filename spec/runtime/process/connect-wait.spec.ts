// --connect-wait: how long a daemon keeps trying a NATS server that does not answer yet, parsed the
// same way by the GCS, the raylet, the autoscaler and `orrery start` (which failures it retries:
// spec/runtime/bus/connect-wait.spec.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { USAGE as GCS_USAGE, parseGcsFlags } from '../../../runtime/gcs/flags.ts';
import { USAGE as RAYLET_USAGE, parseRayletFlags } from '../../../runtime/raylet/flags.ts';
import { connectWaitFlag, CONNECT_WAIT_FLAG, FlagError } from '../../../runtime/process/flags.ts';
import { rayletArgs } from '../../../runtime/autoscaler/provider.ts';

const given = (value?: string): Map<string, string> => new Map(value === undefined ? [] : [[CONNECT_WAIT_FLAG, value]]);
const problem = (run: () => unknown): FlagError | undefined => {
  try {
    run();
    return undefined;
  } catch (err) {
    return err as FlagError;
  }
};

test('no flag and no environment: no wait', () => {
  assert.is(connectWaitFlag(given(), {}), 0);
  assert.is(connectWaitFlag(given(), { ORRERY_CONNECT_WAIT: '  ' }), 0);
});

test('seconds from the flag, over $ORRERY_CONNECT_WAIT; fractions allowed', () => {
  assert.is(connectWaitFlag(given('30'), { ORRERY_CONNECT_WAIT: '5' }), 30);
  assert.is(connectWaitFlag(given(), { ORRERY_CONNECT_WAIT: '2.5' }), 2.5);
  assert.is(connectWaitFlag(given('0'), {}), 0);
});

for (const bad of ['', 'soon', '-1', 'Infinity', '1e9', '30s']) {
  test(`${JSON.stringify(bad)} is an error naming --connect-wait`, () => {
    const err = problem(() => connectWaitFlag(given(bad), {}));
    assert.instance(err, FlagError);
    assert.is(err!.code, 'INVALID_FLAG');
    assert.is(err!.flag, '--connect-wait');
    assert.match(err!.message, `--connect-wait: expected seconds from 0 to 86400, got ${JSON.stringify(bad)}`);
  });
}

test('a bad $ORRERY_CONNECT_WAIT is named as the source', () => {
  const err = problem(() => connectWaitFlag(given(), { ORRERY_CONNECT_WAIT: 'later' }));
  assert.match(err!.message, /got "later" \(from \$ORRERY_CONNECT_WAIT\)/);
});

test('the GCS and the raylet take it, and say so in their usage', () => {
  assert.is(parseGcsFlags(['--connect-wait', '12'], {}).connectWaitSeconds, 12);
  assert.is(parseRayletFlags(['--connect-wait=3'], {}).connectWaitSeconds, 3);
  assert.is(parseRayletFlags([], { ORRERY_CONNECT_WAIT: '4' }).connectWaitSeconds, 4);
  assert.is(problem(() => parseRayletFlags(['--connect-wait', 'x'], {}))?.flag, '--connect-wait');
  for (const usage of [GCS_USAGE, RAYLET_USAGE]) assert.match(usage, '--connect-wait SECONDS');
});

test('a node the autoscaler launches waits as long as its launch may take', () => {
  const req = { nodeType: 'cpu', nodeName: 'n1', labels: {}, taints: {}, resources: { CPU: 1 }, address: 'nats://x:1', cluster: 'c' };
  assert.equal(rayletArgs({ ...req, connectWaitSeconds: 120 }).slice(-2), ['--connect-wait', '120']);
  assert.not.ok(rayletArgs(req).includes('--connect-wait'));
});

test.run();
