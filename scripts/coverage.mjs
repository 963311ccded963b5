#!/usr/bin/env node
// `npm run coverage`: the whole suite with coverage, an HTML report in coverage/, and the lib/ gate.
// The work is done by the test runner (scripts/test.mjs --coverage), which npm test also uses.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const runner = resolve(import.meta.dirname, 'test.mjs');
const run = spawnSync(process.execPath, [runner, '--coverage', '--html', ...process.argv.slice(2)], { stdio: 'inherit' });
process.exit(run.status ?? 1);
