// The resident side of hard anti-affinity, as Kubernetes' InterPodAffinity filter checks "existing
// pods' anti-affinity" (ErrReasonExistingAntiAffinityRulesNotMatch): the reason is stable and names
// the resident's rule; which residents is detail.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileRequest, schedule, seededRng, type SchedulingRequest } from '../../../../lib/index.ts';
import { RESIDENT_ANTI_AFFINITY, residentAntiAffinity } from '../../../../lib/scheduling/filters/resident-anti-affinity.ts';
import { baseAttempt } from '../../../../lib/scheduling/attempts.ts';
import { cluster, failureOf, placedOn } from '../../../support/cluster.ts';

const state = cluster([{ id: 'n1' }, { id: 'n2' }]);
const req = (repelledBy?: Record<string, string[]>): SchedulingRequest => ({ ...compileRequest({}, { namespace: 'default' }), ...(repelledBy ? { repelledBy } : {}) });

const cases: { name: string; repelledBy?: Record<string, string[]>; node: string; want: { reason: string; code: string; detail: unknown } | undefined }[] = [
  { name: 'no residents repel', node: 'n1', want: undefined },
  { name: 'a resident elsewhere', repelledBy: { n2: ['q'] }, node: 'n1', want: undefined },
  { name: 'a resident on the node', repelledBy: { n1: ['q'] }, node: 'n1', want: { reason: RESIDENT_ANTI_AFFINITY, code: 'unschedulable', detail: { actors: ['q'] } } },
  { name: 'two residents on the node', repelledBy: { n1: ['p', 'q'] }, node: 'n1', want: { reason: RESIDENT_ANTI_AFFINITY, code: 'unschedulable', detail: { actors: ['p', 'q'] } } },
  { name: 'inherited names are not nodes', repelledBy: {}, node: 'constructor', want: undefined },
];

for (const c of cases) {
  test(`residentAntiAffinity: ${c.name}`, () => {
    const node = state.nodes.get(c.node) ?? { ...state.nodes.get('n1')!, id: c.node };
    assert.equal(residentAntiAffinity.check(node, baseAttempt(req(c.repelledBy), 0), state), c.want);
  });
}

test('the pipeline avoids a repelled node and explains a request that only fits there', () => {
  assert.is(placedOn(schedule(state, req({ n1: ['q'] }), { rng: seededRng(1) })), 'n2');
  const f = failureOf(schedule(state, req({ n1: ['q'], n2: ['r'] }), { rng: seededRng(1) }));
  assert.is(f.message, `0/2 nodes are available: 2 node(s) ${RESIDENT_ANTI_AFFINITY}.`);
  assert.is(f.code, 'unschedulable', 'the resident may leave');
});

test('a resident anti-affine over a topology domain refuses every node of that domain', () => {
  const zones = cluster([{ id: 'a1', labels: { zone: 'a' } }, { id: 'a2', labels: { zone: 'a' } }, { id: 'b1', labels: { zone: 'b' } }, { id: 'n0' }]);
  const repelledIn = [{ topologyKey: 'zone', domain: 'a', actors: ['q'] }];
  const r: SchedulingRequest = { ...compileRequest({}, { namespace: 'default' }), repelledIn };
  const verdict = (id: string) => residentAntiAffinity.check(zones.nodes.get(id)!, baseAttempt(r, 0), zones);
  assert.equal(verdict('a2'), { code: 'unschedulable', reason: RESIDENT_ANTI_AFFINITY, detail: { topologyKey: 'zone', domain: 'a', actors: ['q'] } });
  assert.is(verdict('b1'), undefined);
  assert.is(verdict('n0'), undefined, 'a node without the label is in no domain');
  assert.is(placedOn(schedule(zones, r, { rng: seededRng(1) })), 'b1');
});

test.run();
