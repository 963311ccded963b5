// Placement groups in the driver API and the CLI, against a fake GCS written here (a responder on
// the bus that answers create_pg / get_pg / remove_pg / list_placement_groups with the wire shapes of
// protocols/messages/placement-group.ts and publishes placement_group_state events when told to).
// What is under test is the client: validation at the call with nothing sent, the wire → API
// conversion, the event mapping, ready()'s handling of events racing the get_pg answer, and the
// CLI's output. The real GCS is not involved.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { firstValueFrom, filter } from 'rxjs';
import { In, InvalidOptionError, InvalidSelectorError, OrreryError, placementGroupStrategy } from '../../lib/index.ts';
import { parseResources } from '../../lib/resources/resource-set.ts';
import { decode, encode } from '../../protocols/codec.ts';
import type { ClusterEventWire } from '../../protocols/messages/cluster.ts';
import type { CreatePg, PlacementGroupInfoWire } from '../../protocols/messages/placement-group.ts';
import { encodeError, encodeOk } from '../../protocols/reply.ts';
import { subjects } from '../../protocols/subjects.ts';
import type { Bus } from '../../runtime/bus/bus.ts';
import { BusClosedError } from '../../runtime/bus/errors.ts';
import { MemoryBroker, connectMemoryBus } from '../../runtime/bus/memory.ts';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';
import { runCli } from '../../runtime/cli/run.ts';
import { placementGroupStatus, placementGroupTable } from '../../runtime/cli/format.ts';
import { ClusterClient } from '../../runtime/client/cluster.ts';
import { RESYNC_MS } from '../../runtime/client/actor-wait.ts';
import { eventFromWire, placementGroupFromWire } from '../../runtime/client/from-wire.ts';
import {
  PlacementGroupNameTakenError,
  PlacementGroupNotFoundError,
  PlacementGroupRemovedError,
  WaitTimeoutError,
  type PlacementGroupInfo,
  type PlacementGroupStateEvent,
} from '../../runtime/index.ts';
import { startNatsServer } from '../helpers/nats-server.ts';

const CLUSTER = 'pgspec';
const subj = subjects(CLUSTER);

/** A placement group as the GCS sends it: resources in fixed-point units. */
function wirePg(id: string, state: PlacementGroupInfoWire['state'], more: Partial<PlacementGroupInfoWire> = {}): PlacementGroupInfoWire {
  return {
    id,
    namespace: 'default',
    state,
    strategy: 'PACK',
    bundles: [{ index: 0, resources: parseResources({ CPU: 1 }) as Record<string, number> }],
    tier: 0,
    ...more,
  };
}

/**
 * The fake GCS: keeps groups by id, answers the four verbs, and lets a test hold a get_pg answer
 * (`onGetPg`) to publish events before or after it.
 */
class FakeGcs {
  readonly groups = new Map<string, PlacementGroupInfoWire>();
  readonly received: { verb: string; body: unknown }[] = [];
  /** The state a new group is answered with (and kept in). */
  createState: PlacementGroupInfoWire['state'] = 'PENDING';
  /** Runs when a get_pg arrives, before its answer; the answer is the group as it is after this returns. */
  onGetPg: ((pgId: string) => void | Promise<void>) | undefined;
  private readonly subs: { unsubscribe(): void }[] = [];
  private getPgWaiters: ((pgId: string) => void)[] = [];

  constructor(private readonly bus: Bus) {
    this.serve('create_pg', (body) => {
      const b = body as CreatePg;
      if (b.name !== undefined && [...this.groups.values()].some((g) => g.name === b.name && g.namespace === b.namespace && g.id !== b.pgId)) {
        throw new PlacementGroupNameTakenError(b.name, b.namespace);
      }
      const pg = this.groups.get(b.pgId) ?? wirePg(b.pgId, this.createState, { namespace: b.namespace, ...(b.name === undefined ? {} : { name: b.name }) });
      this.groups.set(pg.id, pg);
      return pg;
    });
    this.serve('get_pg', async (body) => {
      const b = body as { pgId?: string; name?: string; namespace?: string };
      const pgId = b.pgId ?? [...this.groups.values()].find((g) => g.name === b.name && g.namespace === (b.namespace ?? 'default'))?.id;
      for (const w of this.getPgWaiters.splice(0)) w(pgId ?? '');
      if (pgId !== undefined) await this.onGetPg?.(pgId);
      const pg = pgId === undefined ? undefined : this.groups.get(pgId);
      if (!pg) throw new PlacementGroupNotFoundError(b);
      return pg;
    });
    this.serve('remove_pg', (body) => {
      const { pgId } = body as { pgId: string };
      const pg = this.groups.get(pgId);
      if (!pg) throw new PlacementGroupNotFoundError({ pgId });
      return this.set(pgId, { state: 'REMOVED', removedCause: 'removed by the user' });
    });
    this.serve('list_placement_groups', () => ({ items: [...this.groups.values()] }));
  }

  /** Changes a group and publishes its placement_group_state event. */
  set(pgId: string, change: Partial<PlacementGroupInfoWire>): PlacementGroupInfoWire {
    const pg = { ...this.groups.get(pgId)!, ...change };
    this.groups.set(pgId, pg);
    this.publish(pg);
    return pg;
  }

  publish(pg: PlacementGroupInfoWire): void {
    this.bus.publish(subj.event('placement_group_state'), encode('event', { type: 'placement_group_state', time: Date.now(), placementGroup: pg }));
  }

  /** Resolves when the next get_pg arrives (before it is answered). */
  nextGetPg(): Promise<string> {
    return new Promise((resolve) => this.getPgWaiters.push(resolve));
  }

  count(verb: string): number {
    return this.received.filter((r) => r.verb === verb).length;
  }

  stop(): void {
    for (const s of this.subs) s.unsubscribe();
  }

  serve(verb: 'create_pg' | 'get_pg' | 'remove_pg' | 'list_placement_groups' | 'list_nodes' | 'list_actors' | 'list_jobs' | 'autoscaler_status', answer: (body: unknown) => unknown): void {
    this.subs.push(
      this.bus.subscribe(subj.gcs(verb), async (msg) => {
        const { body } = decode(msg.data);
        this.received.push({ verb, body });
        try {
          msg.respond(encodeOk(await answer(body)));
        } catch (err) {
          msg.respond(encodeError(err));
        }
      }),
    );
  }
}

let broker: MemoryBroker;
let gcsBus: Bus;
let gcs: FakeGcs;
let client: ClusterClient;

async function openClient(): Promise<ClusterClient> {
  return ClusterClient.open(connectMemoryBus(broker), {
    address: 'memory://pgspec',
    cluster: CLUSTER,
    namespace: 'default',
    requestTimeoutMs: 5000,
    callTimeoutMs: 5000,
    ownsBus: true,
  });
}

let named = 0;

/**
 * A group made through placementGroup(), and a second handle to it from getPlacementGroup(): one
 * without placementGroup()'s creation watch, so its ready() asks get_pg at once.
 */
async function fetchedGroup() {
  const name = `fetched-${++named}`;
  await client.placementGroup({ bundles: [{ CPU: 1 }], name });
  return client.getPlacementGroup(name);
}

test.before.each(async () => {
  broker = new MemoryBroker();
  gcsBus = connectMemoryBus(broker);
  gcs = new FakeGcs(gcsBus);
  await gcsBus.flush();
  client = await openClient();
});

test.after.each(async () => {
  await client.close();
  gcs.stop();
  await gcsBus.close();
});

test('bad options are typed errors at the call, and no create_pg is sent', async () => {
  const spy = connectMemoryBus(broker);
  let sent = 0;
  spy.subscribe(subj.gcs('create_pg'), () => void sent++);
  await spy.flush();
  const cases: [string, unknown, new (...a: never[]) => OrreryError, string, RegExp][] = [
    ['a zero bundle resource', { bundles: [{ CPU: 0 }] }, InvalidOptionError, 'INVALID_OPTION', /bundles\[0\]\.CPU/],
    ['a negative bundle resource', { bundles: [{ CPU: 1 }, { GPU: -1 }] }, InvalidOptionError, 'INVALID_OPTION', /bundles\[1\]\.GPU/],
    ['no bundles', { bundles: [] }, InvalidOptionError, 'INVALID_OPTION', /bundles/],
    ['fewer selectors than bundles', { bundles: [{ CPU: 1 }, { CPU: 1 }], bundleLabelSelector: [{ region: 'us' }] }, InvalidOptionError, 'INVALID_OPTION', /bundleLabelSelector.*one selector per bundle \(2\)/],
    ['more selectors than bundles', { bundles: [{ CPU: 1 }], bundleLabelSelector: [{}, {}] }, InvalidOptionError, 'INVALID_OPTION', /bundleLabelSelector/],
    ['a fallback with mismatched selectors', { bundles: [{ CPU: 1 }], fallbackStrategy: [{ bundles: [{ CPU: 1 }], bundleLabelSelector: [] }] }, InvalidOptionError, 'INVALID_OPTION', /fallbackStrategy\[0\]\.bundleLabelSelector/],
    ['an unknown strategy', { bundles: [{ CPU: 1 }], strategy: 'NEAREST' }, InvalidOptionError, 'INVALID_OPTION', /strategy/],
    ['a bad selector value', { bundles: [{ CPU: 1 }], bundleLabelSelector: [{ region: 'in(us' }] }, InvalidSelectorError, 'INVALID_SELECTOR', /region/],
    ['a bad toleration', { bundles: [{ CPU: 1 }], tolerations: { gpu: { operator: 'Near', values: [] } } }, InvalidSelectorError, 'INVALID_SELECTOR', /gpu/],
    ['a misspelt option', { bundles: [{ CPU: 1 }], stratgy: 'PACK' }, InvalidOptionError, 'INVALID_OPTION', /stratgy/],
    ['an empty name', { bundles: [{ CPU: 1 }], name: '' }, InvalidOptionError, 'INVALID_OPTION', /name/],
    ['an empty namespace', { bundles: [{ CPU: 1 }], namespace: '' }, InvalidOptionError, 'INVALID_OPTION', /namespace/],
    ['not an object', null, InvalidOptionError, 'INVALID_OPTION', /placementGroup/],
  ];
  for (const [what, opts, type, code, pattern] of cases) {
    let err: unknown;
    try {
      // the call itself rejects: it is async, but validation happens before anything is sent
      await client.placementGroup(opts as never);
    } catch (e) {
      err = e;
    }
    assert.instance(err, type, what);
    assert.is((err as OrreryError).code, code, what);
    assert.match((err as Error).message, pattern, what);
  }
  await client.bus.flush();
  await spy.flush();
  assert.is(sent, 0, 'no create_pg was sent');
  assert.is(gcs.count('create_pg'), 0);
  // the spy does see a valid call: the zero above is not a deaf subscription
  await client.placementGroup({ bundles: [{ CPU: 1 }] });
  await spy.flush();
  assert.is(sent, 1);
  await spy.close();
});

test('create_pg carries a fresh actor-style id, the namespace and name, and the options as plain data', async () => {
  const gpu = In('a100', 'h100');
  const pg = await client.placementGroup({
    name: 'training',
    namespace: 'ml',
    strategy: 'STRICT_SPREAD',
    bundles: [{ CPU: 1, GPU: 0.5 }, { CPU: 2 }],
    bundleLabelSelector: [{ region: 'us' }, {}],
    tolerations: { gpu },
    fallbackStrategy: [{ bundles: [{ CPU: 1 }] }],
  });
  assert.match(pg.id, /^[0-9a-f]{16}$/);
  assert.is(pg.name, 'training');
  const [sent] = gcs.received.filter((r) => r.verb === 'create_pg');
  const body = sent.body as CreatePg;
  assert.is(body.pgId, pg.id);
  assert.is(body.namespace, 'ml');
  assert.is(body.name, 'training');
  assert.equal(body.options, {
    name: 'training',
    strategy: 'STRICT_SPREAD',
    bundles: [{ CPU: 1, GPU: 0.5 }, { CPU: 2 }],
    bundleLabelSelector: [{ region: 'us' }, {}],
    tolerations: { gpu: { operator: 'IN', values: ['a100', 'h100'] } },
    fallbackStrategy: [{ bundles: [{ CPU: 1 }] }],
  });
  // the handle is what placementGroupStrategy needs
  assert.equal(placementGroupStrategy(pg, 1), { type: 'PLACEMENT_GROUP', placementGroupId: pg.id, bundleIndex: 1 });
  const other = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  assert.is.not(other.id, pg.id);
  assert.is((gcs.received.filter((r) => r.verb === 'create_pg')[1].body as CreatePg).namespace, 'default', "the connection's namespace by default");
});

test('placementGroupFromWire: bundle resources in user quantities, node ids and reasons kept', () => {
  const wire = wirePg('pg1', 'RESCHEDULING', {
    name: 'g',
    bundles: [
      { index: 0, resources: parseResources({ CPU: 0.5, memory: 1024 }) as Record<string, number>, nodeId: 'n1' },
      { index: 1, resources: parseResources({ GPU: 1 }) as Record<string, number> },
    ],
    tier: 1,
    pendingReason: 'node n2 died',
  });
  assert.equal(placementGroupFromWire(wire), {
    id: 'pg1',
    name: 'g',
    namespace: 'default',
    state: 'RESCHEDULING',
    strategy: 'PACK',
    bundles: [
      { index: 0, resources: { CPU: 0.5, memory: 1024 }, nodeId: 'n1' },
      { index: 1, resources: { GPU: 1 } },
    ],
    tier: 1,
    pendingReason: 'node n2 died',
  });
});

test('eventFromWire produces placement_group_state events; one without its group is dropped', async () => {
  const wire: ClusterEventWire = { type: 'placement_group_state', time: 5, seq: 9, placementGroup: wirePg('pg1', 'CREATED', { bundles: [{ index: 0, resources: parseResources({ CPU: 2 }) as Record<string, number>, nodeId: 'n1' }] }) };
  const event = eventFromWire(wire) as PlacementGroupStateEvent;
  assert.is(event.type, 'placement_group_state');
  assert.is(event.time, 5);
  assert.is(event.seq, 9);
  assert.equal(event.placementGroup.bundles, [{ index: 0, resources: { CPU: 2 }, nodeId: 'n1' }]);
  assert.is(eventFromWire({ type: 'placement_group_state', time: 5 }), undefined);
  // and they reach events$
  const pg = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  const seen = firstValueFrom(client.events$.pipe(filter((e): e is PlacementGroupStateEvent => e.type === 'placement_group_state')));
  gcs.set(pg.id, { state: 'CREATED' });
  assert.is((await seen).placementGroup.state, 'CREATED');
});

test('ready(): a group already CREATED resolves with its info', async () => {
  const pg = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  gcs.set(pg.id, { state: 'CREATED', bundles: [{ index: 0, resources: parseResources({ CPU: 1 }) as Record<string, number>, nodeId: 'n1' }] });
  const info = await pg.ready();
  assert.is(info.state, 'CREATED');
  assert.equal(info.bundles, [{ index: 0, resources: { CPU: 1 }, nodeId: 'n1' }]);
});

test('ready(): CREATED between the watch and the get_pg answer is not missed, though the answer is stale', async () => {
  const pg = await fetchedGroup();
  // the GCS computed PENDING, then the group was created and its event published before the answer left
  gcs.onGetPg = (pgId) => {
    const stale = gcs.groups.get(pgId)!;
    gcs.set(pgId, { state: 'CREATED' });
    gcs.groups.set(pgId, stale);
  };
  const info = await pg.ready({ timeoutMs: 5000 });
  assert.is(info.state, 'CREATED');
});

test('ready(): waits through PENDING, PREPARED and RESCHEDULING, and ignores other groups, until CREATED', async () => {
  const pg = await fetchedGroup();
  const other = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  let settled = false;
  const asked = gcs.nextGetPg();
  const ready = pg.ready().finally(() => (settled = true));
  await asked;
  gcs.set(pg.id, { state: 'PREPARED' });
  gcs.set(other.id, { state: 'CREATED' });
  gcs.set(pg.id, { state: 'RESCHEDULING', pendingReason: 'a commit failed' });
  // a later get_pg round trip orders after the events above on the bus
  await other.info();
  assert.not.ok(settled, 'not ready while PREPARED or RESCHEDULING, nor on another group');
  gcs.set(pg.id, { state: 'CREATED', pendingReason: undefined });
  assert.is((await ready).state, 'CREATED');
});

test('ready(): REMOVED is a PlacementGroupRemovedError with its cause, from an event or from the answer', async () => {
  const pg = await fetchedGroup();
  const asked = gcs.nextGetPg();
  const ready = pg.ready().catch((e: unknown) => e);
  await asked;
  gcs.set(pg.id, { state: 'REMOVED', removedCause: 'removed by the user' });
  const err = (await ready) as PlacementGroupRemovedError;
  assert.instance(err, PlacementGroupRemovedError);
  assert.is(err.code, 'PLACEMENT_GROUP_REMOVED');
  assert.is(err.removedCause, 'removed by the user');
  assert.match(err.message, new RegExp(`placement group ${pg.id} was removed: removed by the user`));
  // already removed when ready() asks
  const again = (await pg.ready().catch((e: unknown) => e)) as PlacementGroupRemovedError;
  assert.instance(again, PlacementGroupRemovedError);
});

test('ready({ timeoutMs }): a TimeoutError (code TIMEOUT) while the group stays PENDING', async () => {
  const pg = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  const err = (await pg.ready({ timeoutMs: 50 }).catch((e: unknown) => e)) as WaitTimeoutError;
  assert.instance(err, WaitTimeoutError);
  assert.is(err.code, 'TIMEOUT');
  assert.is(err.name, 'TimeoutError');
  assert.match(err.message, new RegExp(`ready\\(\\) of placement group ${pg.id} did not complete within 50 ms`));
});

test('ready(): closing the client ends the wait with BusClosedError; an unknown id with PlacementGroupNotFoundError', async () => {
  const pg = await fetchedGroup();
  const fresh = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  const asked = gcs.nextGetPg();
  const ready = pg.ready().catch((e: unknown) => e);
  const freshReady = fresh.ready().catch((e: unknown) => e);
  await asked;
  await client.close();
  assert.instance(await ready, BusClosedError);
  assert.instance(await freshReady, BusClosedError, 'a ready() waiting on the creation watch ends too');
  client = await openClient();
  const ghost = await fetchedGroup();
  gcs.groups.delete(ghost.id);
  const err = (await ghost.ready().catch((e: unknown) => e)) as PlacementGroupNotFoundError;
  assert.instance(err, PlacementGroupNotFoundError);
  assert.is(err.code, 'PLACEMENT_GROUP_NOT_FOUND');
});

test('ready() on the handle placementGroup() returned asks no get_pg: its watch from before create_pg settles it', async () => {
  const pg = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  const other = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  let settled = false;
  const ready = pg.ready().finally(() => (settled = true));
  gcs.set(pg.id, { state: 'PREPARED' });
  gcs.set(other.id, { state: 'CREATED' });
  await other.info(); // a round trip orders after the events above on the bus
  assert.not.ok(settled, 'not ready while PREPARED, nor on another group');
  gcs.set(pg.id, { state: 'CREATED', bundles: [{ index: 0, resources: parseResources({ CPU: 1 }) as Record<string, number>, nodeId: 'n1' }] });
  const info = await ready;
  assert.is(info.state, 'CREATED');
  assert.equal(info.bundles, [{ index: 0, resources: { CPU: 1 }, nodeId: 'n1' }]);
  assert.equal(
    gcs.received.filter((r) => r.verb === 'get_pg').map((r) => (r.body as { pgId: string }).pgId),
    [other.id],
    'the only get_pg is the test\'s own info()',
  );
  // REMOVED the same way
  const doomed = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  const failed = doomed.ready().catch((e: unknown) => e);
  gcs.set(doomed.id, { state: 'REMOVED', removedCause: 'removed by the user' });
  const err = (await failed) as PlacementGroupRemovedError;
  assert.instance(err, PlacementGroupRemovedError);
  assert.is(err.removedCause, 'removed by the user');
  // REMOVED is final: a later ready() fails the same way, without asking
  assert.instance(await doomed.ready().catch((e: unknown) => e), PlacementGroupRemovedError);
  assert.is(gcs.count('get_pg'), 1);
});

test('ready(): once the creation watch has stopped (the create_pg answer said CREATED), it asks get_pg, so a group removed since is REMOVED', async () => {
  gcs.createState = 'CREATED';
  const pg = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  assert.is((await pg.ready()).state, 'CREATED');
  assert.is(gcs.count('get_pg'), 1);
  gcs.set(pg.id, { state: 'REMOVED', removedCause: 'removed by the user' });
  const err = (await pg.ready().catch((e: unknown) => e)) as PlacementGroupRemovedError;
  assert.instance(err, PlacementGroupRemovedError);
  assert.is(gcs.count('get_pg'), 2, 'a CREATED seen earlier is not taken for the state now');
});

test('ready(): a lost CREATED event does not hang it: the GCS is asked after RESYNC_MS.first', async () => {
  const pg = await client.placementGroup({ bundles: [{ CPU: 1 }] });
  const started = Date.now();
  const ready = pg.ready({ timeoutMs: 4 * RESYNC_MS.first });
  gcs.groups.set(pg.id, { ...gcs.groups.get(pg.id)!, state: 'CREATED' }); // created, its event lost
  assert.is((await ready).state, 'CREATED');
  assert.ok(Date.now() - started >= RESYNC_MS.first - 50, 'events first: the GCS is asked only after a while');
  assert.is(gcs.count('get_pg'), 1);
});

test('info(), remove(), placementGroups() and getPlacementGroup()', async () => {
  const pg = await client.placementGroup({ bundles: [{ CPU: 1 }], name: 'named' });
  assert.is((await pg.info()).state, 'PENDING');
  const byName = await client.getPlacementGroup('named');
  assert.is(byName.id, pg.id);
  assert.is(byName.name, 'named');
  const taken = (await client.placementGroup({ bundles: [{ CPU: 1 }], name: 'named' }).catch((e: unknown) => e)) as PlacementGroupNameTakenError;
  assert.instance(taken, PlacementGroupNameTakenError, 'the GCS error reaches the caller as its class');
  assert.is(taken.code, 'PLACEMENT_GROUP_NAME_TAKEN');
  const missing = (await client.getPlacementGroup('nope', 'elsewhere').catch((e: unknown) => e)) as PlacementGroupNotFoundError;
  assert.instance(missing, PlacementGroupNotFoundError);
  assert.is(missing.code, 'PLACEMENT_GROUP_NOT_FOUND');
  assert.match(missing.message, /no placement group elsewhere\/nope/);
  const all = await client.placementGroups();
  assert.equal(all.map((g) => [g.id, g.bundles[0].resources]), [[pg.id, { CPU: 1 }]]);
  await pg.remove();
  assert.equal(gcs.received.filter((r) => r.verb === 'remove_pg').map((r) => r.body), [{ pgId: pg.id }]);
  assert.is((await pg.info()).state, 'REMOVED');
});

const groups: PlacementGroupInfo[] = [
  {
    id: 'a1b2c3d4e5f60718',
    name: 'train',
    namespace: 'ml',
    state: 'CREATED',
    strategy: 'SPREAD',
    bundles: [
      { index: 0, resources: { CPU: 1 }, nodeId: 'n-aaa' },
      { index: 1, resources: { CPU: 1, GPU: 0.5 }, nodeId: 'n-bbb' },
    ],
    tier: 0,
  },
  {
    id: 'ffff000011112222',
    namespace: 'default',
    state: 'PENDING',
    strategy: 'STRICT_PACK',
    bundles: [{ index: 0, resources: { CPU: 64 } }],
    tier: 0,
    pendingReason: '0/2 nodes are available: 2 node(s) had insufficient resources.',
  },
  { id: 'eeee000011112222', namespace: 'default', state: 'REMOVED', strategy: 'PACK', bundles: [{ index: 0, resources: { CPU: 1 } }], tier: 0, removedCause: 'removed by the user' },
];

test('CLI format: the placement-group table and the status section', () => {
  const names = new Map([['n-aaa', 'node-a']]);
  assert.equal(placementGroupTable(groups, names), [
    'PG_ID             NAME      STATE    STRATEGY     BUNDLES                                   DETAIL',
    'a1b2c3d4e5f60718  ml/train  CREATED  SPREAD       0:{CPU:1}@node-a 1:{CPU:1,GPU:0.5}@n-bbb',
    'ffff000011112222  -         PENDING  STRICT_PACK  0:{CPU:64}                                0/2 nodes are available: 2 node(s) had insufficient resources.',
    'eeee000011112222  -         REMOVED  PACK         0:{CPU:1}                                 removed by the user',
  ]);
  assert.equal(placementGroupStatus(groups), [
    'Placement groups: 3 (1 CREATED, 1 PENDING, 1 REMOVED)',
    'Placement groups not created:',
    '  ffff000011112222 PENDING: 0/2 nodes are available: 2 node(s) had insufficient resources.',
    '  eeee000011112222 REMOVED: removed by the user',
  ]);
  assert.equal(placementGroupStatus([]), ['Placement groups: 0']);
  assert.equal(placementGroupStatus([groups[0]]), ['Placement groups: 1 (1 CREATED)']);
});

test('CLI: `list placement-groups [--json]` and `status` against a NATS server and a fake GCS', async () => {
  const server = await startNatsServer();
  const bus = await connectNatsBus({ servers: server.url, name: 'fake-gcs' });
  const fake = new FakeGcs(bus);
  try {
    const wireOf = (g: PlacementGroupInfo): PlacementGroupInfoWire => ({
      ...g,
      bundles: g.bundles.map((b) => ({ ...b, resources: parseResources(b.resources) as Record<string, number> })),
    });
    for (const g of groups) fake.groups.set(g.id, wireOf(g));
    const node = (nodeId: string, name: string) => ({ nodeId, name, state: 'ALIVE', labels: {}, taints: {}, resources: { total: parseResources({ CPU: 2 }), available: parseResources({ CPU: 1 }) } });
    fake.serve('list_nodes', () => ({ items: [node('n-aaa', 'node-a'), node('n-bbb', 'node-b')] }));
    fake.serve('list_actors', () => ({ items: [] }));
    fake.serve('autoscaler_status', () => ({ status: null }));
    fake.serve('list_jobs', () => ({ items: [] }));
    await bus.flush();
    const run = async (argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli([...argv, '--address', server.url, '--cluster', CLUSTER], { out: (l) => out.push(l), err: (l) => err.push(l), env: {} });
      return { code, out, err };
    };
    const listed = await run(['list', 'placement-groups']);
    assert.is(listed.code, 0, listed.err.join('\n'));
    assert.equal(listed.out, placementGroupTable(groups, new Map([['n-aaa', 'node-a'], ['n-bbb', 'node-b']])));
    assert.match(listed.out[1], /0:\{CPU:1\}@node-a 1:\{CPU:1,GPU:0\.5\}@node-b/);
    const json = await run(['list', 'placement-groups', '--json']);
    assert.is(json.code, 0, json.err.join('\n'));
    assert.equal(JSON.parse(json.out.join('\n')), groups);
    const status = await run(['status']);
    assert.is(status.code, 0, status.err.join('\n'));
    const text = status.out.join('\n');
    assert.ok(text.endsWith(['Jobs: 0', ...placementGroupStatus(groups), 'Autoscaler: not running'].join('\n')), text);
    assert.match(text, /Nodes: 2 \(2 ALIVE\)/);
  } finally {
    fake.stop();
    await bus.close();
    await server.stop();
  }
});

test('CLI: `status` against a GCS that does not serve placement groups says so and still succeeds', async () => {
  const server = await startNatsServer();
  const bus = await connectNatsBus({ servers: server.url, name: 'old-gcs' });
  try {
    const unknownType = (subject: string) =>
      bus.subscribe(subject, (msg) => msg.respond(encodeError(new OrreryError('UNKNOWN_TYPE', 'unknown message type "list_placement_groups"'))));
    unknownType(subj.gcs('list_placement_groups'));
    unknownType(subj.gcs('autoscaler_status'));
    unknownType(subj.gcs('list_jobs'));
    bus.subscribe(subj.gcs('list_nodes'), (msg) => msg.respond(encodeOk({ items: [] })));
    bus.subscribe(subj.gcs('list_actors'), (msg) => msg.respond(encodeOk({ items: [] })));
    await bus.flush();
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['status', '--address', server.url, '--cluster', CLUSTER], { out: (l) => out.push(l), err: (l) => err.push(l), env: {} });
    assert.is(code, 0, err.join('\n'));
    assert.equal(out.slice(-3), ['Jobs: not supported by this GCS', 'Placement groups: not supported by this GCS', 'Autoscaler: not supported by this GCS']);
  } finally {
    await bus.close();
    await server.stop();
  }
});

test.run();
