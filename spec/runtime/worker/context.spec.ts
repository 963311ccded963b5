import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { getRuntimeContext, runInContext } from '../../../runtime/worker/context.ts';

const context = { nodeId: 'n1', nodeName: 'one', actorId: 'a1', labels: { zone: 'z' } };

test('outside an actor getRuntimeContext throws NOT_IN_WORKER', () => {
  try {
    getRuntimeContext();
    assert.unreachable();
  } catch (err) {
    assert.instance(err, OrreryError);
    assert.is((err as OrreryError).code, 'NOT_IN_WORKER');
  }
});

test('inside runInContext it follows awaits and timers, and returns a copy', async () => {
  const seen = await runInContext(context, async () => {
    await new Promise((resolve) => setTimeout(resolve, 1));
    const got = getRuntimeContext();
    got.labels.zone = 'changed';
    return [got, getRuntimeContext()];
  });
  assert.equal(seen[1], context);
  assert.is(context.labels.zone, 'z');
});

test('a task context has a taskId and no actorId', () => {
  const got = runInContext({ nodeId: 'n1', nodeName: 'one', taskId: 't1', labels: {} }, () => getRuntimeContext());
  assert.equal(got, { nodeId: 'n1', nodeName: 'one', taskId: 't1', labels: {} });
  assert.not.ok('actorId' in got);
});

test.run();
