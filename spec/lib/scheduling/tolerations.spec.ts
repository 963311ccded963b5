// Tolerations with an effect and the wildcard toleration, as Kubernetes' TaintToleration plugin
// (pkg/apis/core/v1/helper ToleratesTaint; plugins/tainttoleration Filter): a toleration with an
// effect tolerates only taints of that effect, one without tolerates every effect; the empty key
// with operator Exists tolerates every taint.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { OrreryError } from '../../../lib/errors.ts';
import { compileRequest } from '../../../lib/scheduling/request.ts';
import { firstUntoleratedTaint, tolerates, ANY_TAINT, type Taint, type TaintEffect, type Tolerations } from '../../../lib/scheduling/taints.ts';
import { compilePlacementGroup } from '../../../lib/scheduling/bundles/request.ts';
import { tolerate } from '../../../lib/scheduling/tolerations.ts';
import { Exists, In, NotIn } from '../../../lib/selectors/builders.ts';
import { untoleratedNoExecute } from '../../../runtime/gcs/running-constraints.ts';
import type { SchedNode } from '../../../lib/cluster/sched-node.ts';

const t = (key: string, value: string, effect: TaintEffect = 'NoSchedule'): Taint => ({ key, value, effect });

const cases: { name: string; tolerations: Tolerations; taint: Taint; want: boolean }[] = [
  // Kubernetes: "if the effect is empty, the toleration matches all effects"
  { name: 'no effect tolerates NoSchedule', tolerations: { gpu: Exists() }, taint: t('gpu', 'a'), want: true },
  { name: 'no effect tolerates NoExecute', tolerations: { gpu: Exists() }, taint: t('gpu', 'a', 'NoExecute'), want: true },
  { name: 'no effect tolerates PreferNoSchedule', tolerations: { gpu: Exists() }, taint: t('gpu', 'a', 'PreferNoSchedule'), want: true },
  { name: 'NoSchedule tolerates NoSchedule', tolerations: { gpu: tolerate(Exists(), 'NoSchedule') }, taint: t('gpu', 'a'), want: true },
  { name: 'NoSchedule does not tolerate NoExecute', tolerations: { gpu: tolerate(Exists(), 'NoSchedule') }, taint: t('gpu', 'a', 'NoExecute'), want: false },
  { name: 'NoSchedule does not tolerate PreferNoSchedule', tolerations: { gpu: tolerate(Exists(), 'NoSchedule') }, taint: t('gpu', 'a', 'PreferNoSchedule'), want: false },
  { name: 'NoExecute tolerates NoExecute', tolerations: { gpu: tolerate(In('a'), 'NoExecute') }, taint: t('gpu', 'a', 'NoExecute'), want: true },
  { name: 'NoExecute with another value does not', tolerations: { gpu: tolerate(In('b'), 'NoExecute') }, taint: t('gpu', 'a', 'NoExecute'), want: false },
  { name: 'PreferNoSchedule tolerates only PreferNoSchedule', tolerations: { p: tolerate(Exists(), 'PreferNoSchedule') }, taint: t('p', 'x'), want: false },
  // Kubernetes: "an empty key with operator Exists matches all keys, values and effects"
  { name: 'wildcard tolerates any NoSchedule', tolerations: { [ANY_TAINT]: Exists() }, taint: t('gpu', 'a'), want: true },
  { name: 'wildcard tolerates any NoExecute', tolerations: { [ANY_TAINT]: Exists() }, taint: t('drain', 'now', 'NoExecute'), want: true },
  { name: 'wildcard with an effect tolerates that effect', tolerations: { [ANY_TAINT]: tolerate(Exists(), 'NoSchedule') }, taint: t('x', 'y'), want: true },
  { name: 'wildcard with an effect not another', tolerations: { [ANY_TAINT]: tolerate(Exists(), 'NoSchedule') }, taint: t('x', 'y', 'NoExecute'), want: false },
  { name: 'a key that fails still falls back on the wildcard', tolerations: { gpu: In('b'), [ANY_TAINT]: Exists() }, taint: t('gpu', 'a'), want: true },
  { name: 'NotIn with an effect', tolerations: { p: tolerate(NotIn('high'), 'NoExecute') }, taint: t('p', 'low', 'NoExecute'), want: true },
];

for (const c of cases) {
  test(`tolerates: ${c.name}`, () => assert.is(tolerates(c.tolerations, c.taint), c.want));
}

test('an actor tolerating only NoSchedule is placed on the node and evicted by its NoExecute taint', () => {
  const req = compileRequest({ tolerations: { gpu: tolerate(Exists(), 'NoSchedule') } }, { namespace: 'ns' });
  const node = { id: 'n1', taints: [t('gpu', 'a'), t('gpu2', 'b', 'NoExecute')] } as unknown as SchedNode;
  assert.is(firstUntoleratedTaint([t('gpu', 'a')], req.tolerations), undefined, 'placement tolerates the NoSchedule taint');
  assert.equal(untoleratedNoExecute({ ...node, taints: [t('gpu', 'a', 'NoExecute')] }, req), t('gpu', 'a', 'NoExecute'), 'the NoExecute one still evicts');
  const all = compileRequest({ tolerations: { gpu: Exists() } }, { namespace: 'ns' });
  assert.is(untoleratedNoExecute({ ...node, taints: [t('gpu', 'a', 'NoExecute')] }, all), undefined, 'without an effect, NoExecute is tolerated too');
});

const invalid: { name: string; tolerations: unknown; option: string; code: string }[] = [
  { name: 'an unknown effect', tolerations: { gpu: { ...Exists(), effect: 'NoRun' } }, option: 'tolerations.gpu.effect', code: 'INVALID_OPTION' },
  { name: 'a misspelt field', tolerations: { gpu: { ...Exists(), efect: 'NoSchedule' } }, option: 'tolerations.gpu.efect', code: 'INVALID_OPTION' },
  { name: 'the wildcard with In', tolerations: { [ANY_TAINT]: In('a') }, option: '', code: 'INVALID_SELECTOR' },
  { name: 'a toleration that is not an object', tolerations: { gpu: 'true' }, option: '', code: 'INVALID_SELECTOR' },
];

for (const c of invalid) {
  test(`compileRequest refuses ${c.name}`, () => {
    for (const compile of [
      () => compileRequest({ tolerations: c.tolerations as Tolerations }, { namespace: 'ns' }),
      () => compilePlacementGroup({ bundles: [{ CPU: 1 }], tolerations: c.tolerations as Tolerations }, {}),
    ]) {
      try {
        compile();
        assert.unreachable('should refuse');
      } catch (err) {
        assert.instance(err, OrreryError);
        assert.is((err as OrreryError).code, c.code);
        if (c.option) assert.is((err as unknown as { option: string }).option, c.option);
      }
    }
  });
}

test('compileRequest keeps the effect and the wildcard', () => {
  const req = compileRequest({ tolerations: { gpu: tolerate(Exists(), 'NoExecute'), [ANY_TAINT]: tolerate(Exists(), 'PreferNoSchedule') } }, { namespace: 'ns' });
  assert.equal(req.tolerations, { gpu: { operator: 'EXISTS', values: [], effect: 'NoExecute' }, '': { operator: 'EXISTS', values: [], effect: 'PreferNoSchedule' } });
});

test.run();
