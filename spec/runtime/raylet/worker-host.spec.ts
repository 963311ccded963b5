// The memory transport's worker host (runtime/raylet/worker-host.ts InlineWorkerHost) follows its
// raylet's fence: a fence stops its actors answering, a renewal brings them back, a lease already
// run out when the host starts starts it fenced.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connectMemoryBus, MemoryBroker } from '../../../runtime/bus/memory.ts';
import { InlineWorkerHost } from '../../../runtime/raylet/worker-host.ts';
import { call, createSpec, rejection } from '../worker/support.ts';

const node = { nodeId: 'bbbbbbbbbbbbbbbb', nodeName: 'node-b', labels: {} };
const bus = connectMemoryBus(new MemoryBroker());
const renew = { type: 'renew', remainingMs: 60_000, sentAt: Date.now() } as const;

const codeOf = async (p: Promise<unknown>): Promise<string | undefined> => ((await rejection(p)) as { code?: string }).code;

test('fence stops its actors answering; a renewal brings them back', async () => {
  const host = new InlineWorkerHost({ bus, cluster: 'default', node, lease: renew });
  const spec = createSpec('Counter');
  await host.create(spec);
  assert.is(await call(bus, spec.actorId, 'increment'), 1);
  host.lease({ type: 'fence' });
  assert.is(host.fenced, true);
  assert.is(await codeOf(call(bus, spec.actorId, 'increment')), 'NO_RESPONDERS');
  host.lease({ ...renew, sentAt: Date.now() });
  assert.is(host.fenced, false);
  assert.is(await call(bus, spec.actorId, 'increment'), 2);
  await host.stop();
});

test('a host started with a lease already run out starts fenced', async () => {
  const host = new InlineWorkerHost({ bus, cluster: 'default', node, lease: { type: 'renew', remainingMs: 100, sentAt: Date.now() - 1000 } });
  const spec = createSpec('Counter');
  await host.create(spec);
  assert.is(host.fenced, true);
  assert.is(await codeOf(call(bus, spec.actorId, 'get')), 'NO_RESPONDERS');
  await host.stop();
});

test('a host started without a lease (a raylet whose GCS sent no node timeout) never fences itself', async () => {
  const host = new InlineWorkerHost({ bus, cluster: 'default', node });
  const spec = createSpec('Counter');
  await host.create(spec);
  assert.is(host.fenced, false);
  assert.is(await call(bus, spec.actorId, 'increment'), 1);
  await host.stop();
});

test.run();
