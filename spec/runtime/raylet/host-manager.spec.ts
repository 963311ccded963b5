import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HostManager } from '../../../runtime/raylet/host-manager.ts';
import { FakeHost } from './fake-host.ts';
import { createSpec, rejection } from '../worker/support.ts';

function manager(opts: { failCreate?: (dedicated: boolean) => Error | undefined } = {}) {
  const launched: { host: FakeHost; dedicated: boolean }[] = [];
  const exits: { actorIds: string[]; cause: string }[] = [];
  const m = new HostManager({
    launch: async ({ dedicated }) => {
      const host = new FakeHost();
      host.failCreate = opts.failCreate?.(dedicated);
      launched.push({ host, dedicated });
      return host;
    },
    onHostExit: (actorIds, cause) => exits.push({ actorIds, cause }),
  });
  return { m, launched, exits };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('actors share one host, started once even when creates arrive together', async () => {
  const { m, launched } = manager();
  const specs = [createSpec('Counter'), createSpec('Counter'), createSpec('Counter')];
  const pids = await Promise.all(specs.map((s) => m.create(s)));
  assert.is(launched.length, 1);
  assert.is(launched[0].dedicated, false);
  assert.equal(new Set(pids.map((p) => p.pid)).size, 1);
  assert.is(m.hostCount, 1);
  assert.is(m.pidOf(specs[0].actorId), launched[0].host.pid);
});

test("isolation 'process' gets a dedicated host, ended when its actor is killed or fails to start", async () => {
  const boom = new Error('constructor threw');
  let dedicatedHosts = 0;
  const { m, launched, exits } = manager({ failCreate: (dedicated) => (dedicated && ++dedicatedHosts === 2 ? boom : undefined) });
  const iso = createSpec('Counter', { isolation: 'process' });
  await m.create(createSpec('Counter'));
  await m.create(iso);
  assert.equal(launched.map((l) => l.dedicated), [false, true]);
  assert.ok(await m.kill(iso.actorId));
  assert.ok(launched[1].host.stopped);
  assert.is(m.hostCount, 1);

  const failing = createSpec('Failing', { isolation: 'process' });
  assert.is(await rejection(m.create(failing)), boom);
  await turn();
  assert.ok(launched[2].host.stopped);
  assert.is(m.hostCount, 1);
  assert.is(m.pidOf(failing.actorId), undefined);
  assert.equal(exits, []);
});

test('a host that exits unexpectedly reports its actors; the next create starts a new shared host', async () => {
  const { m, launched, exits } = manager();
  const a = createSpec('Counter');
  const b = createSpec('Counter');
  await m.create(a);
  await m.create(b);
  launched[0].host.die('signal SIGKILL');
  await turn();
  assert.equal(exits.length, 1);
  assert.equal(exits[0].actorIds.sort(), [a.actorId, b.actorId].sort());
  assert.match(exits[0].cause, `pid ${launched[0].host.pid}`);
  assert.match(exits[0].cause, 'signal SIGKILL');
  assert.is(m.pidOf(a.actorId), undefined);
  assert.is(m.hostCount, 0);
  await m.create(createSpec('Counter'));
  assert.is(launched.length, 2);
});

test('a killed actor is not reported when its host later dies', async () => {
  const { m, launched, exits } = manager();
  const a = createSpec('Counter');
  const b = createSpec('Counter');
  await m.create(a);
  await m.create(b);
  assert.ok(await m.kill(a.actorId));
  assert.not.ok(await m.kill(a.actorId));
  launched[0].host.die('code 1');
  await turn();
  assert.equal(exits, [{ actorIds: [b.actorId], cause: `worker host (pid ${launched[0].host.pid}) exited unexpectedly (code 1)` }]);
});

test('stop and crash end every host without reporting; later creates are refused', async () => {
  for (const how of ['stop', 'crash'] as const) {
    const { m, launched, exits } = manager();
    await m.create(createSpec('Counter'));
    await m.create(createSpec('Counter', { isolation: 'process' }));
    if (how === 'stop') await m.stop();
    else m.crash();
    await turn();
    assert.is(m.hostCount, 0);
    assert.equal(exits, []);
    assert.is(launched.length, 2);
    await rejection(m.create(createSpec('Counter')));
  }
});

test.run();
