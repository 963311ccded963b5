// What a process logs about refused messages: the first of each code in full, then one summary per
// interval while more come — never a line per message, and a later storm is still reported.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RejectionLog } from '../../../runtime/process/rejection-log.ts';

function harness() {
  let now = 0;
  const timers: { at: number; fn: () => void; live: boolean }[] = [];
  const lines: string[] = [];
  const log = new RejectionLog('raylet', (l) => lines.push(l), {
    intervalMs: 60_000,
    now: () => now,
    setTimer: (fn, ms) => {
      const t = { at: now + ms, fn, live: true };
      timers.push(t);
      return { cancel: () => void (t.live = false) };
    },
  });
  const advance = (ms: number) => {
    now += ms;
    for (const t of timers) if (t.live && t.at <= now) (t.live = false), t.fn();
  };
  return { log, lines, advance };
}

test('10,000 refusals of one code in a minute: the first line, then one summary at the minute', () => {
  const { log, lines, advance } = harness();
  for (let i = 0; i < 10_000; i++) log.note('MALFORMED', `refused #${i}`);
  assert.equal(lines, ['refused #0 (more MALFORMED are counted, and summed up every 60 s while they come)']);
  advance(60_000);
  assert.is(lines.length, 2);
  assert.is(lines[1], 'raylet: 9999 more MALFORMED in the last 60 s');
  advance(600_000);
  assert.is(lines.length, 2, 'nothing more while nothing comes');
});

test('each code has its own first line and its own summaries', () => {
  const { log, lines, advance } = harness();
  log.note('MALFORMED', 'a');
  log.note('TOO_LARGE', 'b');
  log.note('MALFORMED', 'c');
  assert.equal(lines.map((l) => l.split(' ')[0]), ['a', 'b']);
  advance(60_000);
  assert.equal(lines.slice(2), ['raylet: 1 more MALFORMED in the last 60 s']);
});

test('a storm an hour later is reported too: its first line in full, then its summary', () => {
  const { log, lines, advance } = harness();
  log.note('VERSION_MISMATCH', 'first');
  advance(3_600_000);
  for (let i = 0; i < 500; i++) log.note('VERSION_MISMATCH', 'again');
  advance(60_000);
  assert.equal(lines.slice(1), ['again (more VERSION_MISMATCH are counted, and summed up every 60 s while they come)', 'raylet: 499 more VERSION_MISMATCH in the last 60 s']);
});

test('flush logs what is owed', () => {
  const { log, lines } = harness();
  log.note('MALFORMED', 'x');
  log.note('MALFORMED', 'y');
  log.flush();
  assert.is(lines.at(-1), 'raylet: 1 more MALFORMED in the last 1 s');
});

test.run();
