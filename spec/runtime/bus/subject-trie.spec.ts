import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SubjectTrie, type TrieEntry } from '../../../runtime/bus/subject-trie.ts';

const entry = (subject: string, queue?: string): TrieEntry => ({ subject, queue });
const subjectsOf = (list: readonly TrieEntry[]) => list.map((e) => e.subject).sort();

const cases: { pattern: string; subject: string; want: boolean }[] = [
  { pattern: 'a.b', subject: 'a.b', want: true },
  { pattern: 'a.b', subject: 'a.b.c', want: false },
  { pattern: 'a.*', subject: 'a.b', want: true },
  { pattern: 'a.*', subject: 'a', want: false },
  { pattern: 'a.*', subject: 'a.b.c', want: false },
  { pattern: '*.*', subject: 'a.b', want: true },
  { pattern: 'a.>', subject: 'a.b.c.d', want: true },
  { pattern: 'a.>', subject: 'a', want: false },
  { pattern: '>', subject: 'x', want: true },
  { pattern: 'a.*.>', subject: 'a.b', want: false },
  { pattern: 'a.*.>', subject: 'a.b.c', want: true },
];

for (const c of cases) {
  test(`${c.pattern} ${c.want ? 'matches' : 'does not match'} ${c.subject}`, () => {
    const trie = new SubjectTrie<TrieEntry>();
    trie.insert(entry(c.pattern));
    assert.is(trie.match(c.subject).plain.length, c.want ? 1 : 0);
  });
}

test('queue entries are grouped by queue name across patterns', () => {
  const trie = new SubjectTrie<TrieEntry>();
  for (const e of [entry('j.x', 'g'), entry('j.*', 'g'), entry('j.>', 'h'), entry('j.x')]) trie.insert(e);
  const m = trie.match('j.x');
  assert.equal(subjectsOf(m.plain), ['j.x']);
  assert.equal(subjectsOf(m.groups.get('g') ?? []), ['j.*', 'j.x']);
  assert.equal(subjectsOf(m.groups.get('h') ?? []), ['j.>']);
});

test('remove takes an entry out of later matches (the cache included) and prunes empty branches', () => {
  const trie = new SubjectTrie<TrieEntry>();
  const a = entry('p.q.r');
  const b = entry('p.*.r');
  trie.insert(a);
  trie.insert(b);
  assert.is(trie.match('p.q.r').plain.length, 2);
  assert.ok(trie.remove(a));
  assert.not.ok(trie.remove(a));
  assert.equal(subjectsOf(trie.match('p.q.r').plain), ['p.*.r']);
  assert.ok(trie.remove(b));
  assert.is(trie.size, 0);
  assert.is((trie as unknown as { root: { children: Map<string, unknown> } }).root.children.size, 0);
});

test('the same entry inserted twice counts once', () => {
  const trie = new SubjectTrie<TrieEntry>();
  const a = entry('s');
  trie.insert(a);
  trie.insert(a);
  assert.is(trie.size, 1);
  assert.is(trie.match('s').plain.length, 1);
});

test.run();
