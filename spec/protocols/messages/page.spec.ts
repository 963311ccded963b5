import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decode, encode } from '../../../protocols/codec.ts';
import { actorInfo } from '../../../protocols/messages/actor.ts';
import { page } from '../../../protocols/messages/page.ts';
import { check } from '../../../protocols/validate.ts';

// The paging fields of list requests and the page reply (protocols/messages/page.ts).

const requests: { name: string; type: 'list_actors' | 'list_nodes' | 'list_placement_groups'; body: unknown; ok: boolean; path?: string }[] = [
  { name: 'an old client\'s empty request', type: 'list_actors', body: {}, ok: true },
  { name: 'limit and cursor', type: 'list_nodes', body: { limit: 10_000, after: 'n1' }, ok: true },
  { name: 'a state filter', type: 'list_actors', body: { states: ['ALIVE', 'PENDING'] }, ok: true },
  { name: 'a limit of 0', type: 'list_actors', body: { limit: 0 }, ok: false, path: 'limit' },
  { name: 'a limit over 10,000', type: 'list_placement_groups', body: { limit: 10_001 }, ok: false, path: 'limit' },
  { name: 'a fractional limit', type: 'list_nodes', body: { limit: 2.5 }, ok: false, path: 'limit' },
  { name: 'an empty cursor', type: 'list_actors', body: { after: '' }, ok: false, path: 'after' },
  { name: 'an unknown state', type: 'list_actors', body: { states: ['ALIVE', 'ASLEEP'] }, ok: false, path: 'states[1]' },
  { name: 'an empty state list', type: 'list_actors', body: { states: [] }, ok: false, path: 'states' },
];

for (const c of requests) {
  test(`${c.type}: ${c.name} is ${c.ok ? 'accepted' : `refused at ${c.path}`}`, () => {
    const bytes = encode(c.type, c.body as never);
    if (c.ok) {
      assert.equal(decode(bytes), { type: c.type, body: c.body });
      return;
    }
    try {
      decode(bytes);
      assert.unreachable('accepted');
    } catch (err) {
      assert.is((err as { code: string }).code, 'INVALID_MESSAGE');
      assert.is((err as { detail: { path: string } }).detail.path, c.path);
    }
  });
}

test('a page reply holds items and an optional cursor; a bare array (a version-2 reply) is refused', () => {
  const actor = { actorId: 'a1', namespace: 'default', className: 'C', state: 'DEAD' as const, numRestarts: 0, labels: {} };
  assert.equal(check(page(actorInfo), { items: [actor], next: 'a1' }), { items: [actor], next: 'a1' });
  assert.equal(check(page(actorInfo), { items: [] }), { items: [] });
  assert.throws(() => check(page(actorInfo), [actor]), /expected an object/);
});

test.run();
