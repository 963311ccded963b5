import { existsSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_WORKER_FLAGS, WORKER_ENTRY, workerExecArgv } from '../../../runtime/raylet/worker-process.ts';

test('the worker entry is resolved beside the raylet, with the same extension', () => {
  assert.match(WORKER_ENTRY, /runtime\/worker\/main\.ts$/);
  assert.ok(existsSync(WORKER_ENTRY));
});

const cases: { name: string; own: string[]; extra: readonly string[]; want: string[] }[] = [
  { name: 'keeps the loader flags and adds the defaults', own: ['--conditions=source', '--import', 'tsx'], extra: DEFAULT_WORKER_FLAGS, want: ['--conditions=source', '--import', 'tsx', ...DEFAULT_WORKER_FLAGS] },
  { name: 'a flag this process sets wins', own: ['--max-semi-space-size=16'], extra: ['--max-semi-space-size=4'], want: ['--max-semi-space-size=16'] },
  { name: 'underscores and dashes name the same flag', own: ['--max_semi_space_size=8'], extra: ['--max-semi-space-size=4'], want: ['--max_semi_space_size=8'] },
  { name: 'no extra flags', own: [], extra: [], want: [] },
];

for (const c of cases) {
  test(`workerExecArgv: ${c.name}`, () => {
    assert.equal(workerExecArgv(c.own, c.extra), c.want);
  });
}

test.run();
