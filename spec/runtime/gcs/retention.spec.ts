import { Session } from 'node:inspector/promises';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { seededRng } from '../../../lib/random.ts';
import { MemoryBroker, connectMemoryBus } from '../../../runtime/bus/memory.ts';
import { GcsService } from '../../../runtime/gcs/service.ts';

// What the GCS keeps of actors that are gone: nothing beyond the dead-actor retention bound. The
// tables a long-running GCS fills with every actor it ever saw are read through the inspector (they
// are private fields), since what is asserted is that they are empty, which no query would show.

const session = new Session();
session.connect();

/** The size of the private Map or Set field `path` of `obj` (`#a.#b`: field #b of the object in its field #a). */
async function privateSize(obj: object, path: string): Promise<number> {
  (globalThis as { __probe?: object }).__probe = obj;
  try {
    const { result } = await session.post('Runtime.evaluate', { expression: 'globalThis.__probe' });
    let objectId = result.objectId!;
    for (const name of path.split('.')) {
      // privateProperties is in the protocol's answer, not in @types/node's
      const props = (await session.post('Runtime.getProperties', { objectId, ownProperties: true })) as { privateProperties?: { name: string; value?: { objectId?: string } }[] };
      const field = (props.privateProperties ?? []).find((p) => p.name === name);
      if (!field?.value?.objectId) throw new Error(`no private field ${name}`);
      objectId = field.value.objectId;
    }
    const size = (await session.post('Runtime.callFunctionOn', { objectId, functionDeclaration: 'function () { return this.size; }', returnByValue: true })) as unknown as { result: { value: number } };
    return size.result.value;
  } finally {
    delete (globalThis as { __probe?: object }).__probe;
  }
}

test('actors killed while they could not be placed leave no explanation behind', async () => {
  const svc = new GcsService({ bus: connectMemoryBus(new MemoryBroker()), cluster: 'c', nodeTimeoutMs: 600_000, rng: seededRng(1), maxDeadActors: 10 });
  await svc.start();
  try {
    // no node at all: each actor is explained as unschedulable when it registers, then killed while PENDING
    for (let i = 0; i < 200; i++) {
      const actorId = `a${i}`;
      svc.actors.register({ actorId, code: { moduleUrl: 'file:///x.ts', className: 'C', args: [] }, namespace: 'default', options: { numCpus: 1 } });
      if (i === 0) assert.is(await privateSize(svc.actors, '#placing.#explanations.#explained'), 1, 'the probe sees an explanation while the actor waits');
      await svc.actors.kill({ actorId, noRestart: true });
    }
    assert.is(svc.actors.list().length, 10, 'dead actors past the bound are forgotten');
    assert.is(svc.queue.size, 0);
    assert.is(await privateSize(svc.actors, '#placing.#explanations.#explained'), 0);
    assert.is(await privateSize(svc.actors, '#placing.#explanations.#due'), 0);
  } finally {
    await svc.stop();
  }
});

test('the live actors kept by group and by owner job (what remove_pg and a finished job kill) leave those sets when they die', async () => {
  const svc = new GcsService({ bus: connectMemoryBus(new MemoryBroker()), cluster: 'c', nodeTimeoutMs: 600_000, rng: seededRng(1), maxDeadActors: 10 });
  await svc.start();
  try {
    for (let j = 0; j < 3; j++) svc.jobs.register({ jobId: `job${j}`, secret: 's'.repeat(32), host: 'spec', pid: 1, namespace: 'default', name: `job ${j}` });
    const inGroup = { schedulingStrategy: { type: 'PLACEMENT_GROUP', placementGroupId: 'pg0000000000001', bundleIndex: -1 } };
    const detached = (i: number): boolean => i % 2 === 1 && i % 5 === 1;
    for (let i = 0; i < 50; i++) {
      const options = i % 2 === 0 ? { numCpus: 1, ...inGroup } : detached(i) ? { numCpus: 1, lifetime: 'detached' } : { numCpus: 1 };
      svc.actors.register({ actorId: `b${i}`, code: { moduleUrl: 'file:///x.ts', className: 'C', args: [] }, namespace: 'default', options, jobId: `job${i % 3}` });
    }
    assert.is(svc.actors.list().filter((a) => a.state !== 'DEAD').length, 50, 'every one waits (no node)');
    assert.is(await privateSize(svc.actors, '#indexes.#inGroup'), 1, 'one group');
    assert.is(await privateSize(svc.actors, '#indexes.#ownedBy'), 3, 'three owner jobs');
    const ownedByJob0 = [...Array(50).keys()].filter((i) => i % 3 === 0 && !detached(i)).length;
    assert.is(await svc.actors.killOwnedBy(new Set(['job0']), (j) => `job ${j} finished`), ownedByJob0, 'what job0 owns, its detached actors left alone');
    assert.ok(svc.actors.list().some((a) => a.actorId === 'b21' && a.state !== 'DEAD'), 'b21 is job0\'s but detached: it lives on');
    for (const a of svc.actors.list()) if (a.state !== 'DEAD') await svc.actors.kill({ actorId: a.actorId, noRestart: true });
    assert.is(svc.actors.list().filter((a) => a.state !== 'DEAD').length, 0);
    assert.is(await privateSize(svc.actors, '#indexes.#inGroup'), 0);
    assert.is(await privateSize(svc.actors, '#indexes.#ownedBy'), 0);
  } finally {
    await svc.stop();
  }
});

test.run();
