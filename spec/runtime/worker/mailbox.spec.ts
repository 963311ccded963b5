import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Mailbox, type MailboxJob } from '../../../runtime/worker/mailbox.ts';

/** A job that finishes when the spec says so, recording what happened to it. */
function job(name: string, log: string[]): MailboxJob & { finish(): void } {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return {
    run: async () => {
      log.push(`start ${name}`);
      await done;
      log.push(`end ${name}`);
    },
    abort: (err) => log.push(`abort ${name}: ${err.message}`),
    finish: () => finish(),
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

const cases = [
  { name: 'one at a time', max: 1, startedAtOnce: ['start a'] },
  { name: 'two at a time', max: 2, startedAtOnce: ['start a', 'start b'] },
  { name: 'more slots than jobs', max: 10, startedAtOnce: ['start a', 'start b', 'start c'] },
];

for (const c of cases) {
  test(`maxConcurrency ${c.max}: ${c.name}, in arrival order`, async () => {
    const log: string[] = [];
    const box = new Mailbox(c.max);
    const jobs = ['a', 'b', 'c'].map((n) => job(n, log));
    for (const j of jobs) box.push(j);
    assert.equal(log, c.startedAtOnce);
    assert.is(box.inFlight, c.startedAtOnce.length);
    assert.is(box.waiting, 3 - c.startedAtOnce.length);
    for (const j of jobs) {
      j.finish();
      await turn();
    }
    assert.equal(log.filter((l) => l.startsWith('start')), ['start a', 'start b', 'start c']);
    assert.is(box.inFlight + box.waiting, 0);
  });
}

test('with one slot, the next job starts only after the previous one ended', async () => {
  const log: string[] = [];
  const box = new Mailbox(1);
  const [a, b] = [job('a', log), job('b', log)];
  box.push(a);
  box.push(b);
  a.finish();
  await turn();
  assert.equal(log, ['start a', 'end a', 'start b']);
});

test('close aborts running and waiting jobs once, and every later push', async () => {
  const log: string[] = [];
  const box = new Mailbox(1);
  const [a, b] = [job('a', log), job('b', log)];
  box.push(a);
  box.push(b);
  box.close(new Error('gone'));
  box.close(new Error('twice'));
  box.push(job('c', log));
  a.finish();
  await turn();
  assert.equal(log, ['start a', 'abort a: gone', 'abort b: gone', 'abort c: gone', 'end a']);
  assert.is(box.inFlight + box.waiting, 0);
});

test('a long queue keeps its order while it is compacted', async () => {
  const order: number[] = [];
  const box = new Mailbox(1);
  for (let i = 0; i < 5000; i++) {
    box.push({ run: async () => void order.push(i), abort: () => assert.unreachable() });
  }
  while (box.inFlight + box.waiting > 0) await turn();
  assert.equal(order, Array.from({ length: 5000 }, (_, i) => i));
});

test('a job that finishes before returning frees its slot at once: the next starts in the same turn, in order', () => {
  const log: string[] = [];
  const box = new Mailbox(1);
  const sync = (name: string): MailboxJob => ({ run: () => void log.push(`ran ${name}`), abort: (err) => log.push(`abort ${name}: ${err.message}`) });
  const slow = job('slow', log);
  box.push(sync('a'));
  box.push(slow);
  box.push(sync('b'));
  assert.equal(log, ['ran a', 'start slow'], 'a ran and returned; slow holds the one slot; b waits for it');
  assert.is(box.inFlight, 1);
  assert.is(box.waiting, 1);
});

test('a job that closes its own mailbox while running synchronously leaves nothing running', () => {
  const log: string[] = [];
  const box = new Mailbox(1);
  box.push({ run: () => box.close(new Error('killed')), abort: (err) => log.push(`abort first: ${err.message}`) });
  box.push({ run: () => void log.push('ran second'), abort: (err) => log.push(`abort second: ${err.message}`) });
  assert.equal(log, ['abort first: killed', 'abort second: killed']);
  assert.is(box.inFlight + box.waiting, 0);
});

test('a push made from inside a running job waits for it, with one slot', async () => {
  const log: string[] = [];
  const box = new Mailbox(1);
  const inner: MailboxJob = { run: () => void log.push('ran inner'), abort: () => assert.unreachable() };
  box.push({
    run: () => {
      log.push('start outer');
      box.push(inner);
      log.push(`inner waits: ${box.waiting}, in flight: ${box.inFlight}`);
    },
    abort: () => assert.unreachable(),
  });
  assert.equal(log, ['start outer', 'inner waits: 1, in flight: 1', 'ran inner']);
  assert.is(box.inFlight + box.waiting, 0);
});

test('a job that started on an idle mailbox and returned a promise holds its slot until it ends', async () => {
  const log: string[] = [];
  const box = new Mailbox(1);
  const slow = job('slow', log);
  box.push(slow);
  assert.is(box.inFlight, 1);
  box.push(job('next', log));
  assert.equal(log, ['start slow']);
  slow.finish();
  await turn();
  assert.equal(log, ['start slow', 'end slow', 'start next']);
});

test.run();
