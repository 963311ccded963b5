// A reader that stops reading (`orrery … | head -5`) is the end of the output, not a crash: no stack
// trace, exit code as if the command had finished.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';

const MAIN = fileURLToPath(new URL('../../../runtime/cli/main.ts', import.meta.url));

test('orrery trace replay BIG | head: the closed pipe ends the command quietly', async () => {
  // a trace of 20,000 records: far more output than a pipe holds, written line by line
  const dir = mkdtempSync(join(tmpdir(), 'orrery-epipe-'));
  const file = join(dir, 'big.trace');
  const header = { format: 'orrery-trace', version: 1, cluster: 'default', startedAt: 1_700_000_000_000 };
  const records = Array.from({ length: 20_000 }, (_, i) =>
    JSON.stringify({ machine: 'actor', id: 'ab12cd34ef567890', seq: i, time: 1_700_000_000_000 + i, event: { type: 'PLACED' }, from: 'PENDING', to: 'onNode.SCHEDULED', context: {} }),
  );
  writeFileSync(file, `${JSON.stringify(header)}\n${records.join('\n')}\n`);
  const child = spawn(process.execPath, [...process.execArgv, MAIN, 'trace', 'replay', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  // read the first chunk, then close our end, as `head` does
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  child.stdout.destroy();
  const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  rmSync(dir, { recursive: true, force: true });
  assert.is(stderr, '', 'nothing on stderr');
  assert.is(code, 0);
});

test.run();
