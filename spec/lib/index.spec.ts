// The package entry exports the issue-17 builders beside the API.md names, which stay as they were.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as orrery from '../../index.ts';

const names: { name: string; kind: 'function' | 'string' }[] = [
  // new
  { name: 'anyOf', kind: 'function' },
  { name: 'preferred', kind: 'function' },
  { name: 'withTopologyKey', kind: 'function' },
  { name: 'tolerate', kind: 'function' },
  { name: 'ANY_TAINT', kind: 'string' },
  // API.md, unchanged
  { name: 'nodeAffinity', kind: 'function' },
  { name: 'actorAffinity', kind: 'function' },
  { name: 'affinity', kind: 'function' },
  { name: 'antiAffinity', kind: 'function' },
  { name: 'labelIn', kind: 'function' },
  { name: 'labelNotIn', kind: 'function' },
  { name: 'labelExists', kind: 'function' },
  { name: 'labelDoesNotExist', kind: 'function' },
  { name: 'nodeIdAffinity', kind: 'function' },
  { name: 'nodeLabelStrategy', kind: 'function' },
  { name: 'placementGroupStrategy', kind: 'function' },
  { name: 'In', kind: 'function' },
  { name: 'NotIn', kind: 'function' },
  { name: 'Exists', kind: 'function' },
  { name: 'DoesNotExist', kind: 'function' },
];

for (const c of names) {
  test(`index.ts exports ${c.name}`, () => assert.type((orrery as Record<string, unknown>)[c.name], c.kind));
}

test.run();
