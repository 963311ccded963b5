import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ANY_TAINT, Exists, affinity, actorAffinity, anyOf, labelIn, nodeAffinity, preferred, tolerate, withTopologyKey } from '../../../lib/index.ts';
import { defineActor } from '../../../runtime/client/actor-class.ts';
import { compileRequest } from '../../../lib/scheduling/request.ts';
import { decode, encode } from '../../../protocols/codec.ts';
import type { RegisterActor } from '../../../protocols/messages/actor.ts';
import { compileActor } from '../../../runtime/gcs/actor-options.ts';
import { validateActorOptions, type ActorOptions } from '../../../runtime/client/actor-options.ts';
import { CodeSourceRefusedError } from '../../../protocols/code-source.ts';
import { Counter } from '../../fixtures/client/actors.ts';

const ctx = { namespace: 'default', actorId: '0123456789abcdef' };

const valid: [string, ActorOptions][] = [
  ['nothing', {}],
  ['resources', { numCpus: 0.5, numGpus: 1, memory: 1024, resources: { disk: 2 } }],
  ['selector and fallback', { labelSelector: { region: 'in(us,eu)' }, fallbackStrategy: [{ labelSelector: { region: '!cn' } }] }],
  ['tolerations', { tolerations: { gpu_node: Exists() } }],
  ['node affinity', { schedulingStrategy: nodeAffinity(labelIn('zone', ['a'])) }],
  ['actor affinity to a handle-like ref', { schedulingStrategy: actorAffinity(affinity({ actorId: 'fedcba9876543210', namespace: 'default' })) }],
  // issue 17 parity options
  ['tolerations with an effect and the wildcard', { tolerations: { gpu_node: tolerate(Exists(), 'NoSchedule'), [ANY_TAINT]: tolerate(Exists(), 'PreferNoSchedule') } }],
  ['anyOf and weighted preferred terms', { schedulingStrategy: nodeAffinity([anyOf([labelIn('gpu', ['a100'])], [labelIn('gpu', ['h100'])]), preferred(labelIn('zone', ['a']), 80)]) }],
  ['actor affinity over a topology key', { schedulingStrategy: actorAffinity(withTopologyKey(labelIn('app', ['web']), 'zone')) }],
  ['several constraints on one key', { labelSelector: { gpu: ['in(a,b,c)', '!b'] } }],
  ['actor fields', { name: 'n', namespace: 'ns', labels: { app: 'web' }, maxRestarts: -1, maxTaskRetries: 3, maxConcurrency: 8, isolation: 'process' }],
];

for (const [name, opts] of valid) {
  test(`valid: ${name}`, () => {
    const v = validateActorOptions(opts, ctx);
    assert.is(v.namespace, opts.namespace ?? 'default');
    assert.is(v.name, opts.name);
    assert.is(v.wire.namespace, v.namespace);
    for (const [k, value] of Object.entries(opts)) assert.equal(v.wire[k], value, k);
  });
}

const invalid: [string, unknown, string, RegExp][] = [
  ['not an object', 'fast', 'INVALID_OPTION', /options/],
  ['unknown key', { numCPUs: 1 }, 'INVALID_OPTION', /numCPUs.*unknown actor option/],
  ['CPU in resources', { resources: { CPU: 1 } }, 'INVALID_OPTION', /numCpus/],
  ['NaN GPUs', { numGpus: Number.NaN }, 'INVALID_OPTION', /numGpus.*finite/],
  ['a bad custom resource', { resources: { disk: -1 } }, 'INVALID_RESOURCE', /disk/],
  ['bad selector', { labelSelector: { 'bad key!': 'x' } }, 'INVALID_SELECTOR', /bad key!/],
  ['bad fallback', { fallbackStrategy: 'eu' }, 'INVALID_OPTION', /fallbackStrategy/],
  ['a top-level option inside a fallback', { fallbackStrategy: [{ labelSelector: { a: 'b' }, numCpus: 64 }] }, 'INVALID_OPTION', /fallbackStrategy\[0\]\.numCpus/],
  ['an empty fallback', { fallbackStrategy: [{}] }, 'INVALID_OPTION', /fallbackStrategy\[0\]\.labelSelector/],
  ['a toleration with an unknown effect', { tolerations: { gpu: { ...Exists(), effect: 'Never' } } }, 'INVALID_OPTION', /tolerations\.gpu\.effect/],
  ['a weight on a hard expression', { schedulingStrategy: { type: 'NODE_AFFINITY', expressions: [{ ...labelIn('a', ['b']), weight: 5 }] } }, 'INVALID_SELECTOR', /weight applies only/],
  ['bad label value', { labels: { app: 'has space' } }, 'INVALID_LABEL', /app/],
  ['name too long', { name: 'x'.repeat(257) }, 'INVALID_OPTION', /name/],
  ['namespace not a string', { namespace: 3 }, 'INVALID_OPTION', /namespace/],
  ['fractional maxTaskRetries', { maxTaskRetries: 1.5 }, 'INVALID_OPTION', /maxTaskRetries/],
  ['maxConcurrency too high', { maxConcurrency: 1e6 }, 'INVALID_OPTION', /maxConcurrency.*1 to 100000/],
  ['isolation', { isolation: 'thread' }, 'INVALID_OPTION', /isolation/],
];

for (const [name, opts, code, pattern] of invalid) {
  test(`invalid: ${name} → ${code}`, () => {
    try {
      validateActorOptions(opts as ActorOptions, ctx);
      assert.unreachable('should have thrown');
    } catch (err) {
      assert.is((err as { code: string }).code, code);
      assert.match((err as Error).message, pattern);
    }
  });
}

test('the parity options travel over the wire: what the GCS compiles from the decoded register_actor is what the client checked', () => {
  const opts: ActorOptions = {
    labelSelector: { gpu: ['in(a,b,c)', '!b'] },
    tolerations: { gpu_node: tolerate(Exists(), 'NoSchedule'), [ANY_TAINT]: tolerate(Exists(), 'PreferNoSchedule') },
    schedulingStrategy: nodeAffinity([anyOf([labelIn('gpu', ['a100'])], [labelIn('gpu', ['h100'])]), preferred(labelIn('zone', ['a']), 80)]),
  };
  const v = validateActorOptions(opts, ctx);
  const body = { actorId: ctx.actorId, code: { moduleUrl: 'file:///x.js', className: 'X', args: [] }, namespace: v.namespace, options: v.wire };
  const decoded = decode(encode('register_actor', body));
  assert.is(decoded.type, 'register_actor');
  const compiled = compileActor(decoded.body as RegisterActor, { rareResources: [] });
  const direct = compileRequest(opts, { namespace: 'default', target: { kind: 'actor', id: ctx.actorId } });
  assert.equal(compiled.request, direct);
  const topo = validateActorOptions({ schedulingStrategy: actorAffinity(withTopologyKey(labelIn('app', ['web']), 'zone')) }, ctx);
  const back = decode(encode('register_actor', { ...body, options: topo.wire }));
  assert.is(compileActor(back.body as RegisterActor, { rareResources: [] }).request.actorAffinity[0].topologyKey, 'zone');
});

test('defineActor records the module URL and export name, and checks its defaults', () => {
  const url = import.meta.url;
  const cls = defineActor(url, Counter, { numCpus: 2 });
  assert.is(cls.moduleUrl, url);
  assert.is(cls.className, 'Counter');
  assert.equal(cls.defaults, { numCpus: 2 });
  assert.ok(Object.isFrozen(cls));
  assert.throws(() => defineActor('not a url', Counter), /moduleUrl/);
  assert.throws(() => defineActor(url, (class {}) as never), /named class/);
  assert.throws(() => defineActor(url, Counter, { numCpus: -1 }), /numCpus/);
});

test('defineActor refuses a module no worker host would load with CODE_SOURCE_REFUSED; a class written in the call is named by its name', () => {
  for (const url of ['node:child_process', 'data:text/javascript,export class Counter {}', 'https://example.com/actors.js']) {
    assert.throws(
      () => defineActor(url, Counter),
      (err: unknown) => err instanceof CodeSourceRefusedError && err.code === 'CODE_SOURCE_REFUSED' && err.detail.moduleUrl === url,
      url,
    );
  }
  const Probe = defineActor(import.meta.url, class Probe {});
  assert.is(Probe.className, 'Probe');
});

test('calls are typed by the class (checked by npm run typecheck)', () => {
  type Handle = import('../../../runtime/client/actor-handle.ts').ActorHandle<Counter>;
  const typed = (h: Handle) => {
    const n: Promise<number> = h.call('add', 1);
    // @ts-expect-error add takes a number
    void h.call('add', 'one');
    // @ts-expect-error no such method
    void h.call('nope');
    return n;
  };
  assert.type(typed, 'function');
});

test.run();
