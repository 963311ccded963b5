// The run dir: made private when missing, refused when another user could have planted what it
// holds (records whose pids get signalled, keys that get trusted).
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkRunDir, runDir } from '../../../runtime/cli/run-dir.ts';
import type { OrreryError } from '../../../lib/errors.ts';

const base = mkdtempSync(join(tmpdir(), 'orrery-run-dir-spec-'));
test.after(() => rmSync(base, { recursive: true, force: true }));

const refusal = (run: () => unknown): OrreryError => {
  try {
    run();
  } catch (err) {
    return err as OrreryError;
  }
  throw new Error('accepted');
};

test('a missing run dir is made, readable and writable by its owner only', () => {
  const dir = join(base, 'fresh', 'run');
  assert.is(runDir({ ORRERY_RUN_DIR: dir }), dir);
  assert.is(statSync(dir).mode & 0o777, 0o700);
});

test('a run dir others may write is refused, naming it and the way out', () => {
  const dir = join(base, 'open');
  runDir({ ORRERY_RUN_DIR: dir });
  chmodSync(dir, 0o777);
  const err = refusal(() => runDir({ ORRERY_RUN_DIR: dir }));
  assert.is(err.code, 'RUN_DIR_UNSAFE');
  assert.match(err.message, new RegExp(`^the run dir ${dir} is not safe to use: it is writable by its group \\(mode 777\\);.*ORRERY_RUN_DIR`));
  chmodSync(dir, 0o702);
  assert.match(refusal(() => runDir({ ORRERY_RUN_DIR: dir })).message, /writable by others \(mode 702\)/);
  chmodSync(dir, 0o755);
  assert.is(runDir({ ORRERY_RUN_DIR: dir }), dir, 'readable by others is fine');
});

test("another user's run dir is refused", () => {
  const dir = join(base, 'theirs');
  runDir({ ORRERY_RUN_DIR: dir });
  const owner = statSync(dir).uid;
  const err = refusal(() => checkRunDir(dir, owner + 1));
  assert.is(err.code, 'RUN_DIR_UNSAFE');
  assert.match(err.message, new RegExp(`it belongs to uid ${owner}, not to you \\(uid ${owner + 1}\\)`));
});

test.run();
