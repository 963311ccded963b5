// The Autoscaler's rounds against a GCS and a provider of this spec's own, on a clock of its own:
// what it does with launches in flight when the GCS goes away and comes back, and with launches an
// earlier autoscaler left in flight. Rounds are driven with update(), never by time.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Autoscaler, parseAutoscalerConfig, type AutoscalerGcs, type LaunchedNode, type LaunchRequest, type NodeProvider, type ProvidedNode } from '../../../runtime/autoscaler/index.ts';
import type { AutoscalerEvent, DemandNode, ResourceDemandsReply } from '../../../protocols/messages/autoscaling.ts';

const CONFIG = parseAutoscalerConfig(`
cluster: c
provider: { type: local }
launchTimeoutSeconds: 60
nodeTypes:
  worker: { resources: { CPU: 2 }, labels: { type: worker }, minWorkers: 0, maxWorkers: 4 }
`);

/** One actor that only a worker node takes. */
const DEMAND: ResourceDemandsReply['actors'][number] = {
  namespace: 'default',
  placement: { numCpus: 2, labelSelector: { type: 'worker' } },
  defaultCpus: 1,
  labels: {},
  count: 1,
  infeasible: 1,
  actorIds: ['a1'],
};

function world() {
  let now = 1_000_000;
  let up = true;
  const nodes: DemandNode[] = [];
  const events: AutoscalerEvent[] = [];
  const gcs: AutoscalerGcs = {
    resourceDemands: async () => {
      if (!up) throw Object.assign(new Error('no GCS answers'), { code: 'GCS_UNAVAILABLE' });
      return { rareResources: [], nodes: [...nodes], actors: nodes.length === 0 ? [DEMAND] : [], placementGroups: [], truncated: false };
    },
    drainNode: async () => undefined,
    autoscalerReport: async (_status, evs) => void events.push(...evs),
  };
  const launched: LaunchRequest[] = [];
  const terminated: ProvidedNode[] = [];
  let earlier: LaunchedNode[] | undefined;
  let terminateFails = 0;
  const provider: NodeProvider & { launched?: () => Promise<readonly LaunchedNode[]> } = {
    kind: 'spec',
    launch: async (req) => void launched.push(req),
    terminate: async (node) => {
      if (terminateFails > 0) {
        terminateFails--;
        throw new Error('the machine API is down');
      }
      terminated.push(node);
    },
    close: async () => undefined,
  };
  let refuse: () => boolean = () => false;
  const withList = (list: LaunchedNode[]): void => {
    earlier = list;
    provider.launched = async () => {
      if (refuse()) throw new Error('listing refused');
      return earlier!;
    };
  };
  const register = (name: string, opts: { state?: 'ALIVE' | 'DRAINING'; idle?: boolean } = {}): void => {
    nodes.push({
      nodeId: `id-${name}`,
      name,
      state: opts.state ?? 'ALIVE',
      labels: { type: 'worker', 'orrery.io/node-group': 'worker' },
      taints: {},
      total: { CPU: 20_000 },
      available: { CPU: opts.idle ? 20_000 : 0 },
      actors: [],
      bundles: 0,
    });
  };
  const make = (): Autoscaler => new Autoscaler({ config: CONFIG, gcs, provider, address: 'nats://spec', now: () => now });
  return {
    make,
    events,
    launched,
    terminated,
    withList,
    failListing: (when: () => boolean) => void (refuse = when),
    failTerminates: (n: number) => void (terminateFails = n),
    register,
    advance: (ms: number) => void (now += ms),
    now: () => now,
    gcsDown: () => void (up = false),
    gcsUp: () => void (up = true),
  };
}

test('a launch in flight while the GCS is away gets a whole launch timeout once the GCS answers again, not what is left of it', async () => {
  const w = world();
  const a = w.make();
  await a.update();
  assert.is(w.launched.length, 1, 'one worker launched for the demand');
  const name = w.launched[0].nodeName;
  w.gcsDown();
  for (let i = 0; i < 5; i++) {
    w.advance(30_000); // 150 s in all without a GCS: past the 60-s launch timeout
    await a.update().catch(() => undefined);
  }
  w.gcsUp();
  await a.update();
  assert.equal(w.terminated, [], 'not given up at the first round after the outage');
  assert.equal(a.status?.launching.map((l) => l.name), [name]);
  assert.is(w.launched.length, 1, 'and nothing launched in its place');
  w.advance(59_000);
  await a.update();
  assert.equal(w.terminated, [], 'still within a whole timeout of the GCS coming back');
  w.advance(2_000);
  await a.update();
  assert.equal(w.terminated.map((t) => t.nodeName), [name], 'given up a whole timeout after the GCS came back');
  assert.ok(w.events.some((e) => e.type === 'node_launch_failed' && e.nodeName === name));
});

test('without an outage the launch timeout counts from the launch', async () => {
  const w = world();
  const a = w.make();
  await a.update();
  const name = w.launched[0].nodeName;
  w.advance(61_000);
  await a.update();
  assert.equal(w.terminated.map((t) => t.nodeName), [name]);
});

test('launches an earlier autoscaler left in flight are taken over: counted against the demand, timed from when they were asked for, launched as nodes once they register', async () => {
  const w = world();
  w.withList([
    { nodeType: 'worker', nodeName: 'c-worker-0a0a0a', since: w.now() - 10_000 },
    // not this cluster's name pattern, an unknown type: left alone
    { nodeType: 'worker', nodeName: 'other-worker-0b0b0b', since: w.now() },
    { nodeType: 'gpu', nodeName: 'c-gpu-0c0c0c', since: w.now() },
  ]);
  const a = w.make();
  await a.update();
  assert.equal(a.status?.launching.map((l) => [l.name, l.since]), [['c-worker-0a0a0a', w.now() - 10_000]]);
  assert.is(w.launched.length, 0, 'nothing launched for the demand it will serve');
  w.register('c-worker-0a0a0a');
  await a.update();
  assert.equal(a.status?.launching, []);
  assert.ok(w.events.some((e) => e.type === 'node_launched' && e.nodeName === 'c-worker-0a0a0a'));
});

test('a taken-over launch whose provider gave no usable time is timed from when it was taken over', async () => {
  const w = world();
  w.withList([
    { nodeType: 'worker', nodeName: 'c-worker-1a1a1a', since: Number.NaN },
    { nodeType: 'worker', nodeName: 'c-worker-1b1b1b', since: w.now() + 3_600_000 },
  ]);
  const a = w.make();
  await a.update();
  assert.equal(a.status?.launching.map((l) => l.since), [w.now(), w.now()]);
  w.advance(61_000);
  await a.update();
  assert.equal(w.terminated.map((t) => t.nodeName).sort(), ['c-worker-1a1a1a', 'c-worker-1b1b1b']);
});

test('a provider that lists names only: the type is read from the name, and the launch timed from the take-over', async () => {
  const w = world();
  w.withList([{ nodeName: 'c-worker-2a2a2a' }, { nodeName: 'c-gpu-2b2b2b' }, { nodeName: 'c-worker-extra-2c2c2c' }]);
  const a = w.make();
  await a.update();
  assert.equal(a.status?.launching.map((l) => [l.name, l.type, l.since]), [['c-worker-2a2a2a', 'worker', w.now()]]);
  assert.is(w.launched.length, 0);
});

test('an idle DRAINING node of ours — a retirement an earlier autoscaler left half done — is terminated once idle for the timeout', async () => {
  const w = world();
  w.register('c-worker-3a3a3a', { state: 'DRAINING', idle: true });
  const a = w.make();
  await a.update();
  assert.equal(w.terminated, [], 'not at once: idle for the timeout first');
  w.advance(61_000);
  await a.update();
  await a.update(); // the retirement runs beside the rounds
  assert.equal(w.terminated.map((t) => t.nodeName), ['c-worker-3a3a3a']);
  assert.ok(w.events.some((e) => e.type === 'node_terminated' && e.nodeName === 'c-worker-3a3a3a'));
});

test('a retirement whose terminate failed is tried again once the node has been idle another timeout, not every round', async () => {
  const w = world();
  w.register('c-worker-4a4a4a', { idle: true });
  w.failTerminates(1);
  const a = w.make();
  await a.update();
  w.advance(61_000);
  await a.update();
  await a.update();
  assert.equal(w.terminated, [], 'the first terminate failed');
  w.advance(30_000);
  await a.update();
  await a.update();
  assert.equal(w.terminated, [], 'not again within the idle timeout');
  w.advance(31_000);
  await a.update();
  await a.update();
  assert.equal(w.terminated.map((t) => t.nodeName), ['c-worker-4a4a4a']);
});

test('a taken-over launch that never registers is given up when its own timeout runs out, and terminated', async () => {
  const w = world();
  w.withList([{ nodeType: 'worker', nodeName: 'c-worker-0d0d0d', since: w.now() - 50_000 }]);
  const a = w.make();
  await a.update();
  w.advance(11_000);
  await a.update();
  assert.equal(w.terminated.map((t) => t.nodeName), ['c-worker-0d0d0d']);
});

test('a provider that fails to list its nodes fails the round before anything is launched, and is asked again next round', async () => {
  const w = world();
  let listings = 0;
  w.withList([{ nodeType: 'worker', nodeName: 'c-worker-0e0e0e', since: w.now() }]);
  const a = w.make();
  w.failListing(() => ++listings === 1);
  await a.update().then(
    () => assert.unreachable('the round went on'),
    (err: Error) => assert.match(err.message, /listing the spec provider's nodes failed \(asked again next round\): listing refused/),
  );
  assert.is(w.launched.length, 0, 'nothing launched on a round that could not see the launches in flight');
  await a.update();
  assert.is(listings, 2);
  assert.equal(a.status?.launching.map((l) => l.name), ['c-worker-0e0e0e']);
  assert.is(w.launched.length, 0);
});

test.run();
