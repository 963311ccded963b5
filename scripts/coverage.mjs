#!/usr/bin/env node
// Runs the whole test suite under c8 (V8 coverage, mapped back to the TypeScript sources through
// tsx's source maps), prints a summary for every source folder, and fails when lib/ — the pure
// scheduling core — is under 90% of lines.
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const c8 = resolve(root, 'node_modules/.bin/c8');
const run = (args) => spawnSync(c8, args, { cwd: root, stdio: 'inherit' }).status ?? 1;

const testStatus = run([
  '--reporter=text-summary', '--reporter=html', '--all', '--extension=.ts',
  '--include=lib/**', '--include=protocols/**', '--include=runtime/**', '--include=index.ts',
  '--exclude=spec/**', '--exclude=**/*.types.ts',
  'node', 'scripts/test.mjs', ...process.argv.slice(2),
]);
console.log('\nlib/ (must be >= 90% of lines):');
const libStatus = run(['report', '--reporter=text-summary', '--all', '--extension=.ts', '--include=lib/**', '--exclude=**/*.types.ts', '--check-coverage', '--lines=90']);
process.exit(testStatus || libStatus);
