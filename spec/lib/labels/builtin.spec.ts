import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { InvalidLabelError } from '../../../lib/errors.ts';
import * as labels from '../../../lib/labels/index.ts';
import { builtinNodeLabels, isReservedKey } from '../../../lib/labels/builtin.ts';

test('built-in label keys are the ones API.md names', () => {
  assert.equal(
    {
      node: [labels.NODE_ID_LABEL, labels.NODE_NAME_LABEL, labels.NODE_IP_LABEL],
      where: [labels.AVAILABILITY_ZONE_LABEL, labels.AVAILABILITY_REGION_LABEL],
      kind: [labels.ACCELERATOR_TYPE_LABEL, labels.MARKET_TYPE_LABEL, labels.NODE_GROUP_LABEL],
      actor: labels.ACTOR_ID_LABEL,
    },
    {
      node: ['orrery.io/node-id', 'orrery.io/node-name', 'orrery.io/node-ip'],
      where: ['orrery.io/availability-zone', 'orrery.io/availability-region'],
      kind: ['orrery.io/accelerator-type', 'orrery.io/market-type', 'orrery.io/node-group'],
      actor: 'orrery.io/actor-id',
    },
  );
});

const reserved: { name: string; input: string; want: boolean }[] = [
  { name: 'a built-in key', input: 'orrery.io/node-id', want: true },
  { name: 'a subdomain of orrery.io', input: 'x.orrery.io/a', want: true },
  { name: 'orrery.io as a bare name', input: 'orrery.io', want: false },
  { name: 'a look-alike domain', input: 'myorrery.io/a', want: false },
  { name: 'orrery.io after the slash', input: 'a/orrery.io', want: false },
  { name: 'a plain user key', input: 'gpu_type', want: false },
];
for (const c of reserved) {
  test(`isReservedKey: ${c.name}`, () => {
    assert.is(isReservedKey(c.input), c.want);
  });
}

const nodes: { name: string; input: Parameters<typeof builtinNodeLabels>[0]; want: Record<string, string> }[] = [
  {
    name: 'only id and name',
    input: { nodeId: 'n1', nodeName: 'head' },
    want: { 'orrery.io/node-id': 'n1', 'orrery.io/node-name': 'head' },
  },
  {
    name: 'every fact known',
    input: {
      nodeId: 'a1b2',
      nodeName: 'worker-1',
      nodeIp: '10.0.0.7',
      acceleratorType: 'nvidia-h100',
      marketType: 'spot',
      nodeGroup: 'gpu-workers',
      availabilityZone: 'us-west4-a',
      availabilityRegion: 'us-west4',
    },
    want: {
      'orrery.io/node-id': 'a1b2',
      'orrery.io/node-name': 'worker-1',
      'orrery.io/node-ip': '10.0.0.7',
      'orrery.io/accelerator-type': 'nvidia-h100',
      'orrery.io/market-type': 'spot',
      'orrery.io/node-group': 'gpu-workers',
      'orrery.io/availability-zone': 'us-west4-a',
      'orrery.io/availability-region': 'us-west4',
    },
  },
  {
    name: 'an empty accelerator type on a CPU-only machine (seed 002)',
    input: { nodeId: 'n1', nodeName: 'cpu', acceleratorType: '' },
    want: { 'orrery.io/node-id': 'n1', 'orrery.io/node-name': 'cpu', 'orrery.io/accelerator-type': '' },
  },
];
for (const c of nodes) {
  test(`builtinNodeLabels: ${c.name}`, () => {
    const out = builtinNodeLabels(c.input);
    assert.equal(out, c.want);
    assert.ok(Object.isFrozen(out));
  });
}

const badNodes: { name: string; input: Parameters<typeof builtinNodeLabels>[0]; key: string; value: string; rule: string }[] = [
  { name: 'empty node id', input: { nodeId: '', nodeName: 'a' }, key: 'orrery.io/node-id', value: '', rule: 'value must not be empty' },
  { name: 'empty node name', input: { nodeId: 'n1', nodeName: '' }, key: 'orrery.io/node-name', value: '', rule: 'value must not be empty' },
  {
    name: 'a name that is not a label value',
    input: { nodeId: 'n1', nodeName: 'my node' },
    key: 'orrery.io/node-name',
    value: 'my node',
    rule: "value may contain only alphanumerics, '-', '_' and '.'",
  },
];
for (const c of badNodes) {
  test(`builtinNodeLabels rejects ${c.name}`, () => {
    try {
      builtinNodeLabels(c.input);
      assert.unreachable('expected an InvalidLabelError');
    } catch (err) {
      assert.instance(err, InvalidLabelError);
      const e = err as InvalidLabelError;
      assert.equal({ code: e.code, key: e.key, value: e.value, rule: e.rule }, { code: 'INVALID_LABEL', key: c.key, value: c.value, rule: c.rule });
    }
  });
}

test.run();
