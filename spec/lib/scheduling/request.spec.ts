import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidLabelError, InvalidOptionError, InvalidResourceError, InvalidSelectorError, OrreryError } from '../../../lib/errors.ts';
import { formatResources } from '../../../lib/resources/resource-set.ts';
import { compileRequest, type CompileContext, type PlacementOptions } from '../../../lib/scheduling/request.ts';
import type { SchedulingRequest } from '../../../lib/scheduling/request.types.ts';
import {
  Exists,
  In,
  NotIn,
  actorAffinity,
  affinity,
  antiAffinity,
  labelExists,
  labelIn,
  nodeAffinity,
  nodeIdAffinity,
  nodeLabelStrategy,
  placementGroupStrategy,
} from '../../../lib/selectors/builders.ts';

type ErrorClass = typeof InvalidOptionError | typeof InvalidResourceError | typeof InvalidSelectorError | typeof InvalidLabelError;
const CODES = new Map<ErrorClass, string>([
  [InvalidOptionError, 'INVALID_OPTION'],
  [InvalidResourceError, 'INVALID_RESOURCE'],
  [InvalidSelectorError, 'INVALID_SELECTOR'],
  [InvalidLabelError, 'INVALID_LABEL'],
]);

/** Runs fn, which must throw `cls` (with its code) whose detail holds these fields. */
function expectError(fn: () => unknown, cls: ErrorClass, detail: Record<string, unknown>): void {
  try {
    fn();
  } catch (err) {
    assert.instance(err, cls);
    assert.instance(err, OrreryError);
    const e = err as OrreryError;
    assert.is(e.code, CODES.get(cls));
    const got: Record<string, unknown> = {};
    for (const k of Object.keys(detail)) got[k] = e.detail[k];
    assert.equal(got, detail);
    return;
  }
  assert.unreachable(`expected ${cls.name}`);
}

const ctx: CompileContext = { namespace: 'default' };
const EXISTS = { operator: 'EXISTS', values: [] };
const hard = (key: string, operator: string, values: string[]) => ({ key, operator, values, soft: false });

/** The request every field of which a case does not mention. */
const base: SchedulingRequest = {
  target: undefined,
  namespace: 'default',
  resources: { CPU: 10_000 },
  selectorTiers: [[]],
  nodeAffinity: [],
  actorAffinity: [],
  nodeId: undefined,
  tolerations: {},
  spread: false,
};

const compiled: { name: string; input: PlacementOptions; ctx?: CompileContext; want: Partial<SchedulingRequest> }[] = [
  // resources
  { name: 'defaults: one CPU, one empty selector tier, nothing else', input: {}, want: {} },
  { name: 'numCpus replaces the default', input: { numCpus: 2.5 }, want: { resources: { CPU: 25_000 } } },
  { name: 'numCpus 0 asks for no CPU', input: { numCpus: 0 }, want: { resources: {} } },
  { name: 'defaultCpus from the context', input: {}, ctx: { namespace: 'default', defaultCpus: 0 }, want: { resources: {} } },
  { name: 'numCpus wins over defaultCpus', input: { numCpus: 1 }, ctx: { namespace: 'default', defaultCpus: 0 }, want: { resources: { CPU: 10_000 } } },
  { name: 'numGpus', input: { numGpus: 0.5 }, want: { resources: { CPU: 10_000, GPU: 5_000 } } },
  { name: 'memory in bytes', input: { numCpus: 0, memory: 2 ** 30 }, want: { resources: { memory: 2 ** 30 } } },
  { name: 'custom resources', input: { resources: { my_res: 2, 'vendor/fpga': 0.25 } }, want: { resources: { CPU: 10_000, my_res: 20_000, 'vendor/fpga': 2_500 } } },
  { name: 'custom zeros are dropped', input: { resources: { my_res: 0 } }, want: { resources: { CPU: 10_000 } } },
  { name: 'numGpus 0 adds nothing', input: { numGpus: 0, memory: 0 }, want: { resources: { CPU: 10_000 } } },
  // context
  {
    name: 'namespace and target come from the context',
    input: {},
    ctx: { namespace: 'team-a', target: { kind: 'actor', id: 'a1', name: 'web' } },
    want: { namespace: 'team-a', target: { kind: 'actor', id: 'a1', name: 'web' } },
  },
  // label selectors and fallbacks
  { name: 'labelSelector is tier 0', input: { labelSelector: { zone: 'a', gpu: '!in(K80,T4)' } }, want: { selectorTiers: [[hard('zone', 'IN', ['a']), hard('gpu', 'NOT_IN', ['K80', 'T4'])]] } as never },
  {
    name: 'fallbackStrategy adds one tier per entry, in order',
    input: { labelSelector: { 'instance-type': 'm5.16xlarge' }, fallbackStrategy: [{ labelSelector: { zone: 'in(a,b)' } }, { labelSelector: {} }] },
    want: { selectorTiers: [[hard('instance-type', 'IN', ['m5.16xlarge'])], [hard('zone', 'IN', ['a', 'b'])], []] } as never,
  },
  { name: 'a fallback with an empty labelSelector is an explicit any-node tier', input: { fallbackStrategy: [{ labelSelector: {} }] }, want: { selectorTiers: [[], []] } },
  { name: 'reserved keys may be selected', input: { labelSelector: { 'orrery.io/accelerator-type': 'exists()' } }, want: { selectorTiers: [[hard('orrery.io/accelerator-type', 'EXISTS', [])]] } as never },
  // tolerations
  { name: 'tolerations', input: { tolerations: { gpu_node: Exists(), gpu_type: In('A100') } }, want: { tolerations: { gpu_node: EXISTS, gpu_type: { operator: 'IN', values: ['A100'] } } } as never },
  { name: 'a toleration of a reserved taint key', input: { tolerations: { 'orrery.io/rare-gpu': Exists() } }, want: { tolerations: { 'orrery.io/rare-gpu': EXISTS } } as never },
  {
    name: 'rare resources add their toleration',
    input: { numGpus: 1 },
    ctx: { namespace: 'default', rareResources: ['GPU'] },
    want: { resources: { CPU: 10_000, GPU: 10_000 }, tolerations: { 'orrery.io/rare-gpu': EXISTS } } as never,
  },
  // strategies
  { name: "'DEFAULT'", input: { schedulingStrategy: 'DEFAULT' }, want: {} },
  { name: "'SPREAD'", input: { schedulingStrategy: 'SPREAD' }, want: { spread: true } },
  { name: "null is DEFAULT (Ray's None)", input: { schedulingStrategy: null as never }, want: {} },
  {
    name: 'nodeAffinity keeps hard and soft expressions',
    input: { schedulingStrategy: nodeAffinity([labelIn('zone', ['a', 'b']), labelExists('gpu', true)]) },
    want: { nodeAffinity: [hard('zone', 'IN', ['a', 'b']), { key: 'gpu', operator: 'EXISTS', values: [], soft: true }] } as never,
  },
  {
    name: 'actorAffinity keeps affinity and anti-affinity expressions',
    input: { schedulingStrategy: actorAffinity([affinity('a1'), antiAffinity(['a2', 'a3'], true)]) },
    want: {
      actorAffinity: [hard('orrery.io/actor-id', 'IN', ['a1']), { key: 'orrery.io/actor-id', operator: 'NOT_IN', values: ['a2', 'a3'], soft: true }],
    } as never,
  },
  {
    name: 'nodeLabelStrategy: hard conditions, then soft ones flagged soft',
    input: { schedulingStrategy: nodeLabelStrategy({ hard: { zone: In('a'), tier: NotIn('spot') }, soft: { gpu: Exists() } }) },
    want: { nodeAffinity: [hard('zone', 'IN', ['a']), hard('tier', 'NOT_IN', ['spot']), { key: 'gpu', operator: 'EXISTS', values: [], soft: true }] } as never,
  },
  { name: 'nodeLabelStrategy with only soft conditions', input: { schedulingStrategy: nodeLabelStrategy({ soft: { zone: In('a') } }) }, want: { nodeAffinity: [{ key: 'zone', operator: 'IN', values: ['a'], soft: true }] } as never },
  {
    name: 'nodeIdAffinity is kept whole',
    input: { schedulingStrategy: nodeIdAffinity('n1', { soft: true, spillOnUnavailable: true }) },
    want: { nodeId: { type: 'NODE_ID_AFFINITY', nodeId: 'n1', soft: true, spillOnUnavailable: true, failOnUnavailable: false } },
  },
  { name: 'placementGroupStrategy, any bundle: CPU_group_<pg>', input: { schedulingStrategy: placementGroupStrategy({ id: 'pg1' }) }, want: { resources: { CPU_group_pg1: 10_000 } } },
  {
    name: 'placementGroupStrategy, bundle 2: CPU_group_2_<pg> and the group-wide CPU_group_<pg>, every other resource alike',
    input: { numGpus: 1, memory: 1024, resources: { my_res: 1 }, schedulingStrategy: placementGroupStrategy({ id: 'pg1' }, 2) },
    want: {
      resources: {
        my_res_group_pg1: 10_000, my_res_group_2_pg1: 10_000, CPU_group_pg1: 10_000, CPU_group_2_pg1: 10_000,
        GPU_group_pg1: 10_000, GPU_group_2_pg1: 10_000, memory_group_pg1: 1024, memory_group_2_pg1: 1024,
      },
    },
  },
  {
    name: 'placementGroupStrategy with bundle index 0',
    input: { numCpus: 0.5, schedulingStrategy: placementGroupStrategy({ id: 'abc-123' }, 0) },
    want: { resources: { 'CPU_group_abc-123': 5_000, 'CPU_group_0_abc-123': 5_000 } },
  },
  {
    name: 'a GPU request in a group still tolerates the rare taint',
    input: { numCpus: 0, numGpus: 1, schedulingStrategy: placementGroupStrategy({ id: 'pg1' }) },
    ctx: { namespace: 'default', rareResources: ['GPU'] },
    want: { resources: { GPU_group_pg1: 10_000 }, tolerations: { 'orrery.io/rare-gpu': EXISTS } } as never,
  },
];

for (const c of compiled) {
  test(`compileRequest: ${c.name}`, () => {
    const got = compileRequest(c.input, c.ctx ?? ctx);
    assert.equal({ ...got }, { ...base, ...(c.ctx ? { namespace: c.ctx.namespace } : {}), ...c.want });
  });
}

test('compileRequest: memory drawn from a bundle stays in bytes when shown', () => {
  const got = compileRequest({ memory: 2 ** 30, schedulingStrategy: placementGroupStrategy({ id: 'pg1' }, 0) }, ctx);
  assert.equal(formatResources(got.resources), { CPU_group_pg1: 1, CPU_group_0_pg1: 1, memory_group_pg1: 2 ** 30, memory_group_0_pg1: 2 ** 30 });
});

test('compileRequest keeps resource keys in a stable order and its result is plain data', () => {
  const got = compileRequest({ numGpus: 1, resources: { my_res: 1 } }, ctx);
  assert.equal(JSON.parse(JSON.stringify(got.resources)), got.resources);
  assert.equal(Object.keys(got.resources).sort(), ['CPU', 'GPU', 'my_res']);
});

const SHAPE = 'expected an object of resource name to quantity';

const rejected: { name: string; input: unknown; cls: ErrorClass; detail: Record<string, unknown> }[] = [
  // the options object itself
  { name: 'null options', input: null, cls: InvalidOptionError, detail: { option: 'options', value: null, rule: 'expected an object' } },
  { name: 'a string for options', input: 'DEFAULT', cls: InvalidOptionError, detail: { option: 'options', value: 'DEFAULT', rule: 'expected an object' } },
  { name: 'a number for options', input: 2, cls: InvalidOptionError, detail: { option: 'options', value: 2, rule: 'expected an object' } },
  // resources
  { name: 'CPU inside resources', input: { resources: { CPU: 1 } }, cls: InvalidOptionError, detail: { option: 'resources', value: { CPU: 1 }, rule: 'use the numCpus option for CPU, not resources' } },
  { name: 'GPU inside resources', input: { resources: { GPU: 2, my_res: 1 } }, cls: InvalidOptionError, detail: { option: 'resources', value: { GPU: 2, my_res: 1 }, rule: 'use the numGpus option for GPU, not resources' } },
  { name: 'memory inside resources', input: { resources: { memory: 100 } }, cls: InvalidOptionError, detail: { option: 'resources', value: { memory: 100 }, rule: 'use the memory option for memory, not resources' } },
  // Ray rejects "CPU" in resources whatever the amount; a zero must not slip through as "1 CPU".
  { name: 'CPU 0 inside resources', input: { resources: { CPU: 0 } }, cls: InvalidOptionError, detail: { option: 'resources', value: { CPU: 0 }, rule: 'use the numCpus option for CPU, not resources' } },
  { name: 'resources not an object', input: { resources: 'CPU=1' }, cls: InvalidResourceError, detail: { resource: 'resources', value: 'CPU=1', rule: SHAPE } },
  { name: 'resources an array', input: { resources: [1] }, cls: InvalidResourceError, detail: { resource: 'resources', value: [1], rule: SHAPE } },
  { name: 'a bad custom resource name', input: { resources: { 'my res': 1 } }, cls: InvalidResourceError, detail: { resource: 'my res', value: 1 } },
  { name: 'a negative custom amount', input: { resources: { my_res: -2 } }, cls: InvalidResourceError, detail: { resource: 'my_res', value: -2, rule: 'quantity must not be negative' } },
  { name: 'negative numCpus', input: { numCpus: -1 }, cls: InvalidOptionError, detail: { option: 'numCpus', value: -1, rule: 'quantity must not be negative' } },
  { name: 'numCpus as a string', input: { numCpus: '2' }, cls: InvalidOptionError, detail: { option: 'numCpus', value: '2', rule: 'quantity must be a finite number' } },
  { name: 'NaN numGpus', input: { numGpus: NaN }, cls: InvalidOptionError, detail: { option: 'numGpus', value: NaN, rule: 'quantity must be a finite number' } },
  { name: 'infinite numGpus', input: { numGpus: Infinity }, cls: InvalidOptionError, detail: { option: 'numGpus', value: Infinity, rule: 'quantity must be a finite number' } },
  { name: 'fractional memory', input: { memory: 1.5 }, cls: InvalidOptionError, detail: { option: 'memory', value: 1.5, rule: 'quantity is a count of bytes and must be a whole number' } },
  { name: 'numGpus too small to count', input: { numGpus: 0.00001 }, cls: InvalidOptionError, detail: { option: 'numGpus', value: 0.00001, rule: 'quantity must be 0 or at least 0.0001' } },
  // selectors
  {
    name: 'a malformed labelSelector value',
    input: { labelSelector: { zone: 'in(a' } },
    cls: InvalidSelectorError,
    detail: { key: 'zone', value: 'in(a', rule: "labelSelector: a plain value may not contain '(', ')', ',' or '!' (found '('); list values with in(a,b)" },
  },
  { name: 'labelSelector not an object', input: { labelSelector: 'zone=a' }, cls: InvalidSelectorError, detail: { key: '', value: 'zone=a', rule: 'labelSelector: label selector must be an object mapping label keys to selector values (got string)' } },
  { name: 'a bad labelSelector key', input: { labelSelector: { 'bad key': 'a' } }, cls: InvalidSelectorError, detail: { key: 'bad key', value: 'a' } },
  { name: 'fallbackStrategy not an array', input: { fallbackStrategy: { labelSelector: {} } }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy', value: { labelSelector: {} }, rule: 'expected an array of { labelSelector }' } },
  { name: 'a null fallback entry', input: { fallbackStrategy: [{ labelSelector: {} }, null] }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy[1]', value: null, rule: 'expected { labelSelector }' } },
  { name: 'a malformed fallback selector', input: { fallbackStrategy: [{ labelSelector: { zone: '!in()' } }] }, cls: InvalidSelectorError, detail: { key: 'zone', value: '!in()', rule: 'fallbackStrategy[0].labelSelector: !in() needs at least one value' } },
  // fallbackStrategy entries are checked like top-level options (a misspelt option is never ignored)
  { name: 'a fallback with a top-level option in it', input: { fallbackStrategy: [{ labelSelector: { a: 'b' }, numCpus: 64 } as never] }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy[0].numCpus', value: 64 } },
  { name: 'a fallback with a misspelt key', input: { fallbackStrategy: [{ labelSelectr: { a: 'b' } } as never] }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy[0].labelSelectr' } },
  { name: 'an empty fallback {}', input: { fallbackStrategy: [{} as never] }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy[0].labelSelector', value: undefined } },
  { name: 'a second fallback that is an array', input: { fallbackStrategy: [{ labelSelector: {} }, [] as never] }, cls: InvalidOptionError, detail: { option: 'fallbackStrategy[1]' } },
  // tolerations
  { name: 'tolerations as an array', input: { tolerations: [Exists()] }, cls: InvalidOptionError, detail: { option: 'tolerations', value: [Exists()] } },
  { name: 'tolerations as a string', input: { tolerations: 'gpu_node' }, cls: InvalidOptionError, detail: { option: 'tolerations', value: 'gpu_node' } },
  { name: 'null tolerations', input: { tolerations: null }, cls: InvalidOptionError, detail: { option: 'tolerations', value: null } },
  { name: 'a bad toleration key', input: { tolerations: { 'bad key': Exists() } }, cls: InvalidLabelError, detail: { key: 'bad key', rule: "name may contain only alphanumerics, '-', '_' and '.'" } },
  {
    name: 'an unknown toleration operator',
    input: { tolerations: { gpu: { operator: 'MAYBE', values: [] } } },
    cls: InvalidSelectorError,
    detail: { key: 'gpu', value: { operator: 'MAYBE', values: [] }, rule: 'unknown operator "MAYBE"; expected one of IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT' },
  },
  { name: 'a toleration In() with no values', input: { tolerations: { gpu: In() } }, cls: InvalidSelectorError, detail: { key: 'gpu', rule: 'IN needs at least one value' } },
  { name: 'a toleration that is a string', input: { tolerations: { gpu: 'exists()' } }, cls: InvalidSelectorError, detail: { key: 'gpu', value: 'exists()', rule: 'condition must be an object {operator, values} (got string)' } },
  // strategies
  { name: "an unknown strategy string ('PACK')", input: { schedulingStrategy: 'PACK' }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy', value: 'PACK', rule: 'expected DEFAULT, SPREAD or a strategy built by a builder' } },
  { name: 'lower-case spread', input: { schedulingStrategy: 'spread' }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy', value: 'spread' } },
  { name: 'a number strategy', input: { schedulingStrategy: 7 }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy', value: 7 } },
  { name: 'an unknown strategy object', input: { schedulingStrategy: { type: 'MAGIC' } }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy', value: { type: 'MAGIC' }, rule: 'unknown strategy type' } },
  { name: 'a strategy object without a type', input: { schedulingStrategy: { nodeId: 'n1' } }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy', value: { nodeId: 'n1' }, rule: 'unknown strategy type' } },
  {
    name: 'node affinity without expressions',
    input: { schedulingStrategy: { type: 'NODE_AFFINITY', expressions: [] } },
    cls: InvalidOptionError,
    detail: { option: 'schedulingStrategy', value: [], rule: 'expected a non-empty list of label match expressions' },
  },
  { name: 'actor affinity with a non-list', input: { schedulingStrategy: { type: 'ACTOR_AFFINITY', expressions: 'a1' } }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy', value: 'a1' } },
  {
    name: 'a hand-built node affinity expression with no values',
    input: { schedulingStrategy: { type: 'NODE_AFFINITY', expressions: [{ key: 'zone', operator: 'IN', values: [] }] } },
    cls: InvalidSelectorError,
    detail: { key: 'zone', rule: 'IN needs at least one value' },
  },
  {
    name: 'a hand-built expression with a non-boolean soft',
    input: { schedulingStrategy: { type: 'ACTOR_AFFINITY', expressions: [{ key: 'app', operator: 'EXISTS', values: [], soft: 'yes' }] } },
    cls: InvalidSelectorError,
    detail: { key: 'app', rule: 'soft must be a boolean' },
  },
  { name: 'node-label hard that is not a map', input: { schedulingStrategy: { type: 'NODE_LABEL', hard: 'zone=a', soft: {} } }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy', value: 'zone=a', rule: 'expected hard/soft condition maps' } },
  { name: 'node-label soft that is null', input: { schedulingStrategy: { type: 'NODE_LABEL', hard: {}, soft: null } }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy', value: null } },
  { name: 'a node-label condition with a bad key', input: { schedulingStrategy: { type: 'NODE_LABEL', hard: { 'a/b/c': Exists() }, soft: {} } }, cls: InvalidLabelError, detail: { key: 'a/b/c' } },
  { name: 'a node-label condition without values', input: { schedulingStrategy: { type: 'NODE_LABEL', hard: {}, soft: { zone: { operator: 'NOT_IN', values: [] } } } }, cls: InvalidSelectorError, detail: { key: 'zone', rule: 'NOT_IN needs at least one value' } },
  { name: 'node-id affinity with an empty id', input: { schedulingStrategy: { type: 'NODE_ID_AFFINITY', nodeId: '', soft: false } }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy.nodeId', value: '', rule: 'expected a node id' } },
  { name: 'node-id affinity with a numeric id', input: { schedulingStrategy: { type: 'NODE_ID_AFFINITY', nodeId: 5 } }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy.nodeId', value: 5 } },
  ...[-2, 1.5, NaN].map((bundleIndex) => ({
    name: `placement group with bundle index ${bundleIndex}`,
    input: { schedulingStrategy: { type: 'PLACEMENT_GROUP', placementGroupId: 'pg1', bundleIndex } },
    cls: InvalidOptionError,
    detail: { option: 'schedulingStrategy', value: { type: 'PLACEMENT_GROUP', placementGroupId: 'pg1', bundleIndex }, rule: 'expected placementGroupStrategy(pg, bundleIndex ≥ -1)' },
  })),
  { name: 'placement group without an id', input: { schedulingStrategy: { type: 'PLACEMENT_GROUP', bundleIndex: 0 } }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy' } },
  // placementGroupStrategy() refuses '', and nodeId '' is refused here; '' would ask for CPU_group_0_, which no node ever has.
  { name: 'placement group with an empty id', input: { schedulingStrategy: { type: 'PLACEMENT_GROUP', placementGroupId: '', bundleIndex: 0 } }, cls: InvalidOptionError, detail: { option: 'schedulingStrategy' } },
];

for (const c of rejected) {
  test(`compileRequest rejects: ${c.name}`, () => {
    expectError(() => compileRequest(c.input as PlacementOptions, ctx), c.cls, c.detail);
  });
}

test.run();
