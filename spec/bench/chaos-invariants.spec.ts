// The chaos run's "one incarnation answering at once" invariant (bench/support/chaos-invariants.ts
// answerOverlaps), as a table of recorded answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { answerOverlaps, type AnswerRecord } from '../../bench/support/chaos-invariants.ts';

const at = (incarnation: string, sentAt: number, answeredAt: number, actorId = 'a1'): AnswerRecord => ({ actorId, incarnation, pid: incarnation === 'old' ? 1 : 2, sentAt, answeredAt });

const cases: { name: string; records: AnswerRecord[]; stale?: { after: number; incarnations: Set<string> }; want: string[] }[] = [
  { name: 'one incarnation', records: [at('old', 0, 1), at('old', 1, 2)], want: [] },
  { name: 'a clean handover', records: [at('old', 0, 1), at('old', 1, 2), at('new', 5, 6), at('new', 6, 7)], want: [] },
  { name: 'interleaved answers (both subscribed)', records: [at('old', 0, 1), at('new', 1, 2), at('old', 2, 3), at('new', 3, 4)], want: ['overlap a1'] },
  { name: 'the old one answered after the new one began', records: [at('new', 5, 6), at('old', 4, 7)], want: ['overlap a1'] },
  { name: 'different actors never overlap each other', records: [at('old', 0, 10, 'a1'), at('new', 1, 2, 'a2')], want: [] },
  {
    name: 'an answer from a stale incarnation after the resume',
    records: [at('old', 0, 1), at('new', 5, 6), at('old', 11, 12)],
    stale: { after: 10, incarnations: new Set(['old']) },
    want: ['stale_answer a1', 'overlap a1'],
  },
];

for (const c of cases) {
  test(c.name, () => {
    assert.equal(answerOverlaps(c.records, c.stale).map((v) => `${v.kind} ${v.id}`), c.want);
  });
}

test.run();
