import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NODE_ID_LABEL } from '../../../lib/labels/builtin.ts';
import { seededRng, type Rng } from '../../../lib/random.ts';
import type { SchedulingRequest } from '../../../lib/scheduling/request.types.ts';
import type { LabelMatchExpression, MatchOperator } from '../../../lib/selectors/expression.ts';
import { AntiAffinityIndex } from '../../../runtime/gcs/anti-affinity-index.ts';

// The index files residents by what they repel; the reference below is the plain scan it replaced
// (every resident, every term). Random placements, departures and lookups must agree with it.

interface Resident {
  nodeId: string;
  namespace: string;
  terms: LabelMatchExpression[];
}

function referenceRepelling(residents: Map<string, Resident>, actor: { actorId: string; namespace: string; labels: Record<string, string> }): string[] {
  const nodes = new Set<string>();
  for (const [id, r] of residents) {
    if (id === actor.actorId) continue;
    const hit = r.terms.some((t) => {
      if (t.soft || (t.operator !== 'NOT_IN' && t.operator !== 'DOES_NOT_EXIST')) return false;
      if ((t.namespace ?? r.namespace) !== actor.namespace || !Object.hasOwn(actor.labels, t.key)) return false;
      return t.operator === 'DOES_NOT_EXIST' || t.values.includes(actor.labels[t.key]);
    });
    if (hit) nodes.add(r.nodeId);
  }
  return [...nodes].sort();
}

const request = (actorAffinity: LabelMatchExpression[]): SchedulingRequest => ({
  namespace: 'unused',
  resources: {},
  selectorTiers: [[]],
  nodeAffinity: [],
  actorAffinity,
  tolerations: [],
  spread: false,
} as unknown as SchedulingRequest);

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)];
const KEYS = ['app', 'tier', 'orrery.io/actor-id'];
const VALUES = ['a', 'b', 'c', 'd'];
const NAMESPACES = ['default', 'other'];
const NODES = ['n1', 'n2', 'n3', 'n4', 'n5'];
const OPERATORS: MatchOperator[] = ['NOT_IN', 'DOES_NOT_EXIST', 'IN', 'EXISTS'];

function randomTerm(rng: Rng): LabelMatchExpression {
  const operator = pick(rng, OPERATORS);
  const values = operator === 'NOT_IN' || operator === 'IN' ? VALUES.filter(() => rng() < 0.4) : [];
  return {
    key: pick(rng, KEYS),
    operator,
    values: values.length === 0 && (operator === 'NOT_IN' || operator === 'IN') ? [pick(rng, VALUES)] : values,
    soft: rng() < 0.2,
    ...(rng() < 0.3 ? { namespace: pick(rng, NAMESPACES) } : {}),
  };
}

function randomLabels(rng: Rng, id: string): Record<string, string> {
  const labels: Record<string, string> = { 'orrery.io/actor-id': rng() < 0.5 ? id : pick(rng, VALUES) };
  for (const k of KEYS.slice(0, 2)) if (rng() < 0.6) labels[k] = pick(rng, VALUES);
  return labels;
}

test('repelling agrees with a scan of every resident under random placements and departures', () => {
  for (let seed = 1; seed <= 30; seed++) {
    const rng = seededRng(seed);
    const index = new AntiAffinityIndex();
    const residents = new Map<string, Resident>();
    for (let step = 0; step < 300; step++) {
      const id = pick(rng, VALUES) + String(Math.floor(rng() * 40));
      const r = rng();
      if (r < 0.45) {
        const terms = Array.from({ length: 1 + Math.floor(rng() * 3) }, () => randomTerm(rng));
        const namespace = pick(rng, NAMESPACES);
        const nodeId = pick(rng, NODES);
        index.placed(id, nodeId, namespace, request(terms));
        const kept = terms.filter((t) => !t.soft && (t.operator === 'NOT_IN' || t.operator === 'DOES_NOT_EXIST'));
        if (kept.length > 0) residents.set(id, { nodeId, namespace, terms: kept });
      } else if (r < 0.6) {
        index.left(id);
        residents.delete(id);
      } else {
        const actor = { actorId: id, namespace: pick(rng, NAMESPACES), labels: randomLabels(rng, id) };
        assert.equal(index.repelling(actor), referenceRepelling(residents, actor), `seed ${seed} step ${step}`);
      }
      assert.is(index.size, residents.size);
    }
  }
});

test('constrain passes the repelling nodes (with their residents) in repelledBy, adds a node-id NOT_IN for those to avoid, and leaves the request alone otherwise', () => {
  const index = new AntiAffinityIndex();
  const base = request([]);
  const newcomer = { actorId: 'x', namespace: 'default', labels: { app: 'web' } };
  assert.is(index.constrain(base, newcomer), base);
  index.placed('r1', 'n2', 'default', request([{ key: 'app', operator: 'NOT_IN', values: ['web'], soft: false }]));
  index.placed('r2', 'n1', 'default', request([{ key: 'app', operator: 'NOT_IN', values: ['db'], soft: false }]));
  assert.is(index.constrain(base, { ...newcomer, labels: { app: 'cache' } }), base);
  const constrained = index.constrain(base, newcomer, new Set(['n3']));
  assert.equal(constrained.nodeAffinity, [{ key: NODE_ID_LABEL, operator: 'NOT_IN', values: ['n3'], soft: false }]);
  assert.equal(constrained.repelledBy, { n2: ['r1'] });
  // a resident placed again is filed under its new terms only
  index.placed('r1', 'n2', 'default', request([{ key: 'app', operator: 'DOES_NOT_EXIST', values: [], soft: false }]));
  assert.equal(index.repelling({ ...newcomer, labels: { app: 'anything' } }), ['n2']);
  index.left('r1');
  assert.equal(index.repelling(newcomer), []);
  assert.is(index.size, 1);
});

// Residents whose anti-affinity has a topologyKey repel their whole domain (Kubernetes'
// InterPodAffinity, existing pods' anti-affinity with topologyKey).
const topo = (key: string, values: string[], topologyKey: string): LabelMatchExpression => ({ key, operator: 'NOT_IN', values, soft: false, topologyKey });
const domainCases: { name: string; zone?: string; term: LabelMatchExpression; newcomer: Record<string, string>; want: { nodes: Record<string, string[]>; domains: { topologyKey: string; domain: string; actors: string[] }[] } }[] = [
  { name: 'a zone term repels the zone, not the node', zone: 'a', term: topo('app', ['web'], 'zone'), newcomer: { app: 'web' }, want: { nodes: {}, domains: [{ topologyKey: 'zone', domain: 'a', actors: ['r1'] }] } },
  { name: 'a newcomer it does not match', zone: 'a', term: topo('app', ['web'], 'zone'), newcomer: { app: 'db' }, want: { nodes: {}, domains: [] } },
  { name: 'a resident on a node without the zone label has no domain', term: topo('app', ['web'], 'zone'), newcomer: { app: 'web' }, want: { nodes: {}, domains: [] } },
  { name: 'a plain term still repels the node', zone: 'a', term: { key: 'app', operator: 'NOT_IN', values: ['web'], soft: false }, newcomer: { app: 'web' }, want: { nodes: { n1: ['r1'] }, domains: [] } },
];
for (const c of domainCases) {
  test(`repellers with topology: ${c.name}`, () => {
    const index = new AntiAffinityIndex();
    index.placed('r1', 'n1', 'default', request([c.term]), c.zone ? { zone: c.zone } : {});
    assert.equal(index.repellers({ actorId: 'x', namespace: 'default', labels: c.newcomer }), c.want);
    const constrained = index.constrain(request([]), { actorId: 'x', namespace: 'default', labels: c.newcomer });
    assert.equal(constrained.repelledIn ?? [], c.want.domains);
  });
}

test.run();
