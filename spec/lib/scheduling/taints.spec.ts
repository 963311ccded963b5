import { InvalidOptionError } from '../../../lib/errors.ts';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ClusterState } from '../../../lib/cluster/cluster-state.ts';
import { InvalidTaintError, OrreryError } from '../../../lib/errors.ts';
import { labelKeyProblem } from '../../../lib/labels/validate.ts';
import { seededRng } from '../../../lib/random.ts';
import { parseResources } from '../../../lib/resources/resource-set.ts';
import { compileRequest } from '../../../lib/scheduling/request.ts';
import { schedule } from '../../../lib/scheduling/schedule.ts';
import {
  describeTaint,
  firstUntoleratedTaint,
  formatTaints,
  hasUntoleratedPreference,
  parseTaint,
  parseTaints,
  rareResourceTaintKey,
  rareResourceTaints,
  rareResourceTolerations,
  TaintEffect,
  tolerates,
  type Taint,
  type Tolerations,
} from '../../../lib/scheduling/taints.ts';
import { DoesNotExist, Exists, In, NotIn } from '../../../lib/selectors/builders.ts';

function expectTaintError(fn: () => unknown, want: { key: string; value: string; rule: string }): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, InvalidTaintError);
    assert.instance(err, OrreryError);
    const e = err as InvalidTaintError;
    assert.is(e.code, 'INVALID_TAINT');
    assert.equal({ key: e.key, value: e.value, rule: e.rule }, want);
    assert.match(e.message, /^invalid taint /, 'said as a taint, not as a label');
    return;
  }
  assert.unreachable('expected an InvalidTaintError');
}

const t = (key: string, value: string, effect: Taint['effect'] = 'NoSchedule'): Taint => ({ key, value, effect });

// ---- parseTaint ----

const parsed: { name: string; key: string; raw: string; reserved?: boolean; want: Taint }[] = [
  { name: 'a plain value is NoSchedule', key: 'gpu_node', raw: 'true', want: t('gpu_node', 'true') },
  { name: 'explicit NoSchedule', key: 'gpu_node', raw: 'true:NoSchedule', want: t('gpu_node', 'true') },
  { name: 'PreferNoSchedule', key: 'memory-pressure', raw: 'high:PreferNoSchedule', want: t('memory-pressure', 'high', 'PreferNoSchedule') },
  { name: 'NoExecute', key: 'maintenance', raw: 'now:NoExecute', want: t('maintenance', 'now', 'NoExecute') },
  { name: 'an empty value', key: 'dedicated', raw: '', want: t('dedicated', '') },
  { name: 'an empty value with an effect', key: 'dedicated', raw: ':NoExecute', want: t('dedicated', '', 'NoExecute') },
  { name: 'a prefixed key', key: 'example.com/team', raw: 'ml', want: t('example.com/team', 'ml') },
  { name: 'a reserved key when allowed', key: 'orrery.io/rare-gpu', raw: 'true', reserved: true, want: t('orrery.io/rare-gpu', 'true') },
];

for (const c of parsed) {
  test(`parseTaint: ${c.name}`, () => {
    assert.equal(parseTaint(c.key, c.raw, { allowReserved: c.reserved }), c.want);
  });
}

const effectRule = (got: string): string => `the effect must be one of NoSchedule, PreferNoSchedule, NoExecute (got ${JSON.stringify(got)})`;
const VALUE_CHARS = "value may contain only alphanumerics, '-', '_' and '.'";

const badTaints: { name: string; key: string; raw: unknown; want: { key: string; value: string; rule: string } }[] = [
  { name: 'unknown effect', key: 'gpu_node', raw: 'true:Evict', want: { key: 'gpu_node', value: 'true:Evict', rule: effectRule('Evict') } },
  { name: 'effects are case-sensitive', key: 'gpu_node', raw: 'true:noschedule', want: { key: 'gpu_node', value: 'true:noschedule', rule: effectRule('noschedule') } },
  { name: 'an empty effect', key: 'gpu_node', raw: 'true:', want: { key: 'gpu_node', value: 'true:', rule: effectRule('') } },
  { name: 'a colon inside the value', key: 'k', raw: 'a:b:NoSchedule', want: { key: 'k', value: 'a:b:NoSchedule', rule: VALUE_CHARS } },
  { name: 'a value with a space', key: 'k', raw: 'bad value', want: { key: 'k', value: 'bad value', rule: VALUE_CHARS } },
  { name: 'a value starting with a dash', key: 'k', raw: '-x:NoExecute', want: { key: 'k', value: '-x:NoExecute', rule: 'value must start and end with an alphanumeric character' } },
  { name: 'a value of 64 characters', key: 'k', raw: 'v'.repeat(64), want: { key: 'k', value: 'v'.repeat(64), rule: 'value must be 63 characters or less' } },
  { name: 'a key with a space', key: 'bad key', raw: 'true', want: { key: 'bad key', value: 'true', rule: "name may contain only alphanumerics, '-', '_' and '.'" } },
  { name: 'an empty key', key: '', raw: 'true', want: { key: '', value: 'true', rule: 'key must not be empty' } },
  { name: 'a reserved key by default', key: 'orrery.io/x', raw: 'true', want: { key: 'orrery.io/x', value: 'true', rule: 'prefix orrery.io/ is reserved for built-in labels (users may set only orrery.io/accelerator-type, market-type, node-group, availability-zone and availability-region)' } },
  { name: 'a value that is not a string', key: 'k', raw: 5, want: { key: 'k', value: '5', rule: 'the value must be a string' } },
];

for (const c of badTaints) {
  test(`parseTaint rejects: ${c.name}`, () => {
    expectTaintError(() => parseTaint(c.key, c.raw as string), c.want);
  });
}

test('TaintEffect names the three effects', () => {
  assert.equal(Object.values(TaintEffect), ['NoSchedule', 'PreferNoSchedule', 'NoExecute']);
});

// ---- parseTaints / formatTaints ----

const records: { name: string; input: Record<string, string>; taints: Taint[]; formatted: Record<string, string> }[] = [
  { name: 'empty', input: {}, taints: [], formatted: {} },
  {
    name: 'one of each effect',
    input: { gpu_node: 'true', pressure: 'high:PreferNoSchedule', drain: 'yes:NoExecute' },
    taints: [t('gpu_node', 'true'), t('pressure', 'high', 'PreferNoSchedule'), t('drain', 'yes', 'NoExecute')],
    formatted: { gpu_node: 'true', pressure: 'high:PreferNoSchedule', drain: 'yes:NoExecute' },
  },
  {
    name: 'an explicit default effect is dropped when formatted',
    input: { gpu_node: 'true:NoSchedule', empty: '' },
    taints: [t('gpu_node', 'true'), t('empty', '')],
    formatted: { gpu_node: 'true', empty: '' },
  },
  { name: 'an empty value with an effect', input: { k: ':PreferNoSchedule' }, taints: [t('k', '', 'PreferNoSchedule')], formatted: { k: ':PreferNoSchedule' } },
];

for (const c of records) {
  test(`parseTaints / formatTaints round trip: ${c.name}`, () => {
    const taints = parseTaints(c.input);
    assert.equal(taints, c.taints);
    assert.equal(formatTaints(taints), c.formatted);
    assert.equal(parseTaints(formatTaints(taints)), taints, 'format then parse gives the same taints');
  });
}

test('parseTaints stops at the first bad entry', () => {
  expectTaintError(() => parseTaints({ ok: 'true', bad: 'x:Never' }), { key: 'bad', value: 'x:Never', rule: effectRule('Never') });
});

test('describeTaint', () => {
  assert.is(describeTaint(t('gpu_node', 'true')), '{gpu_node: true}');
  assert.is(describeTaint(t('pressure', 'high', 'PreferNoSchedule')), '{pressure: high}');
});

// ---- tolerations ----

const tolerationCases: { name: string; tolerations: Tolerations; taint: Taint; want: boolean }[] = [
  { name: 'Exists tolerates any value', tolerations: { gpu_node: Exists() }, taint: t('gpu_node', 'true'), want: true },
  { name: 'Exists tolerates an empty value', tolerations: { gpu_node: Exists() }, taint: t('gpu_node', ''), want: true },
  { name: 'equality (In with one value) tolerates that value', tolerations: { gpu_type: In('A100') }, taint: t('gpu_type', 'A100'), want: true },
  { name: 'equality does not tolerate another value', tolerations: { gpu_type: In('A100') }, taint: t('gpu_type', 'H100'), want: false },
  { name: 'In tolerates any listed value', tolerations: { gpu_type: In('A100', 'H100') }, taint: t('gpu_type', 'H100'), want: true },
  { name: 'NotIn tolerates an unlisted value', tolerations: { pressure: NotIn('high') }, taint: t('pressure', 'low'), want: true },
  { name: 'NotIn does not tolerate a listed value', tolerations: { pressure: NotIn('high') }, taint: t('pressure', 'high'), want: false },
  { name: 'DoesNotExist never tolerates a present taint', tolerations: { gpu_node: DoesNotExist() }, taint: t('gpu_node', 'true'), want: false },
  { name: 'a toleration for another key', tolerations: { other: Exists() }, taint: t('gpu_node', 'true'), want: false },
  { name: 'no tolerations', tolerations: {}, taint: t('gpu_node', 'true'), want: false },
  { name: 'inherited names are not tolerations', tolerations: {}, taint: t('constructor', 'x'), want: false },
  { name: 'the effect does not matter to tolerates', tolerations: { p: Exists() }, taint: t('p', 'x', 'NoExecute'), want: true },
];

for (const c of tolerationCases) {
  test(`tolerates: ${c.name}`, () => {
    assert.is(tolerates(c.tolerations, c.taint), c.want);
  });
}

const firstCases: { name: string; taints: Taint[]; tolerations: Tolerations; first: Taint | undefined; preference: boolean }[] = [
  { name: 'no taints', taints: [], tolerations: {}, first: undefined, preference: false },
  { name: 'an untolerated NoSchedule', taints: [t('gpu_node', 'true')], tolerations: {}, first: t('gpu_node', 'true'), preference: false },
  { name: 'an untolerated NoExecute', taints: [t('drain', 'now', 'NoExecute')], tolerations: {}, first: t('drain', 'now', 'NoExecute'), preference: false },
  { name: 'PreferNoSchedule is ignored', taints: [t('pressure', 'high', 'PreferNoSchedule')], tolerations: {}, first: undefined, preference: true },
  { name: 'a tolerated PreferNoSchedule', taints: [t('pressure', 'high', 'PreferNoSchedule')], tolerations: { pressure: Exists() }, first: undefined, preference: false },
  {
    name: 'the first untolerated one, skipping tolerated ones',
    taints: [t('a', '1'), t('pressure', 'high', 'PreferNoSchedule'), t('b', '2'), t('c', '3')],
    tolerations: { a: Exists() },
    first: t('b', '2'),
    preference: true,
  },
  { name: 'every taint tolerated', taints: [t('a', '1'), t('b', '2', 'NoExecute')], tolerations: { a: In('1'), b: Exists() }, first: undefined, preference: false },
];

for (const c of firstCases) {
  test(`firstUntoleratedTaint / hasUntoleratedPreference: ${c.name}`, () => {
    assert.equal(firstUntoleratedTaint(c.taints, c.tolerations), c.first);
    assert.is(hasUntoleratedPreference(c.taints, c.tolerations), c.preference);
  });
}

// ---- rare resources (seed 003 follow-on) ----

const RARE_GPU = 'orrery.io/rare-gpu';

test('rareResourceTaintKey lowercases the resource under orrery.io/rare-', () => {
  assert.is(rareResourceTaintKey('GPU'), RARE_GPU);
  assert.is(rareResourceTaintKey('my_rare'), 'orrery.io/rare-my_rare');
});

const rareTaintCases: { name: string; total: Record<string, number>; rare: string[]; want: Taint[] }[] = [
  { name: 'a node with GPUs', total: { CPU: 8, GPU: 1 }, rare: ['GPU'], want: [t(RARE_GPU, 'true')] },
  { name: 'a CPU-only node', total: { CPU: 8 }, rare: ['GPU'], want: [] },
  { name: 'a node with zero GPUs', total: { CPU: 8, GPU: 0 }, rare: ['GPU'], want: [] },
  { name: 'rare isolation off', total: { CPU: 8, GPU: 4 }, rare: [], want: [] },
  { name: 'a custom rare resource too', total: { GPU: 1, my_rare: 2 }, rare: ['GPU', 'my_rare'], want: [t(RARE_GPU, 'true'), t('orrery.io/rare-my_rare', 'true')] },
  { name: 'only the rare resources the node has', total: { my_rare: 2 }, rare: ['GPU', 'my_rare'], want: [t('orrery.io/rare-my_rare', 'true')] },
];

for (const c of rareTaintCases) {
  test(`rareResourceTaints: ${c.name}`, () => {
    assert.equal(rareResourceTaints(parseResources(c.total), c.rare), c.want);
  });
}

const rareTolerationCases: { name: string; request: Record<string, number>; rare: string[]; want: Record<string, unknown> }[] = [
  { name: 'a GPU request', request: { CPU: 1, GPU: 1 }, rare: ['GPU'], want: { [RARE_GPU]: { operator: 'EXISTS', values: [] } } },
  { name: 'a fractional GPU request', request: { GPU: 0.25 }, rare: ['GPU'], want: { [RARE_GPU]: { operator: 'EXISTS', values: [] } } },
  { name: 'a CPU request', request: { CPU: 1 }, rare: ['GPU'], want: {} },
  { name: 'rare isolation off', request: { GPU: 1 }, rare: [], want: {} },
  { name: 'a custom rare resource', request: { my_rare: 1 }, rare: ['GPU', 'my_rare'], want: { 'orrery.io/rare-my_rare': { operator: 'EXISTS', values: [] } } },
];

for (const c of rareTolerationCases) {
  test(`rareResourceTolerations: ${c.name}`, () => {
    assert.equal(rareResourceTolerations(parseResources(c.request), c.rare), c.want);
  });
}

test('rare taints are tolerated exactly by the requests asking for the rare resource', () => {
  const [gpuTaint] = rareResourceTaints(parseResources({ CPU: 8, GPU: 2 }), ['GPU']);
  const gpuTolerations = rareResourceTolerations(parseResources({ GPU: 1 }), ['GPU']);
  const cpuTolerations = rareResourceTolerations(parseResources({ CPU: 1 }), ['GPU']);
  assert.is(tolerates(gpuTolerations, gpuTaint), true);
  assert.is(tolerates(cpuTolerations, gpuTaint), false);
});

const rareRequests: { name: string; opts: Parameters<typeof compileRequest>[0]; want: Record<string, unknown> }[] = [
  { name: 'numGpus adds the GPU toleration', opts: { numGpus: 1 }, want: { [RARE_GPU]: { operator: 'EXISTS', values: [] } } },
  { name: 'a CPU request gets none', opts: { numCpus: 2 }, want: {} },
  {
    name: 'user tolerations are kept beside the automatic one',
    opts: { numGpus: 1, tolerations: { gpu_node: Exists() } },
    want: { [RARE_GPU]: { operator: 'EXISTS', values: [] }, gpu_node: { operator: 'EXISTS', values: [] } },
  },
  { name: 'a custom rare resource', opts: { resources: { my_rare: 1 } }, want: { 'orrery.io/rare-my_rare': { operator: 'EXISTS', values: [] } } },
];

for (const c of rareRequests) {
  test(`compileRequest with rareResources: ${c.name}`, () => {
    const req = compileRequest(c.opts, { namespace: 'default', rareResources: ['GPU', 'my_rare'] });
    assert.equal(req.tolerations, c.want);
  });
}

test('with rare isolation, CPU work stays off the GPU node and GPU work lands on it', () => {
  const rare = ['GPU'];
  const state = new ClusterState();
  for (const [id, res] of [['cpu-node', { CPU: 8 }], ['gpu-node', { CPU: 8, GPU: 1 }]] as const) {
    const total = parseResources(res);
    state.addNode({ nodeId: id, total, taints: rareResourceTaints(total, rare) });
  }
  assert.equal(state.node('cpu-node')!.taints, []);
  assert.equal(state.node('gpu-node')!.taints, [t(RARE_GPU, 'true')]);
  const rng = seededRng(3);
  for (let i = 0; i < 20; i++) {
    const cpu = schedule(state, compileRequest({ numCpus: 1 }, { namespace: 'default', rareResources: rare }), { rng });
    assert.equal(cpu, { status: 'placed', nodeId: 'cpu-node', tier: 0 });
  }
  const gpu = schedule(state, compileRequest({ numGpus: 1 }, { namespace: 'default', rareResources: rare }), { rng });
  assert.equal(gpu, { status: 'placed', nodeId: 'gpu-node', tier: 0 });
  state.allocate('cpu-node', parseResources({ CPU: 8 }));
  const busy = schedule(state, compileRequest({ numCpus: 1 }, { namespace: 'default', rareResources: rare }), { rng });
  assert.is(busy.status, 'unschedulable', 'a CPU request waits for the CPU node rather than take the GPU node');
});

test('every rare taint key is a valid label key (it is shown in NodeInfo.taints and parsed back)', () => {
  for (const resource of ['GPU', 'my_rare', 'r'.repeat(50)]) {
    assert.is(labelKeyProblem(rareResourceTaintKey(resource), { allowReserved: true }), undefined, resource);
  }
});

test('a rare resource whose name cannot be part of a taint key is refused when configured, naming it', () => {
  // Resource names allow '/' and up to 128 characters; label names allow neither.
  for (const resource of ['vendor/fpga', 'r'.repeat(60)]) {
    try {
      rareResourceTaintKey(resource);
      assert.unreachable(`accepted ${resource}`);
    } catch (err) {
      assert.instance(err, InvalidOptionError);
      assert.is((err as InvalidOptionError).code, 'INVALID_OPTION');
      assert.equal([(err as InvalidOptionError).option, (err as InvalidOptionError).value], ['rareResources', resource]);
    }
  }
});

test.run();
