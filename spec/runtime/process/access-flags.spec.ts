// --creds and --tls-* of the GCS and raylet processes: a path (never a secret) from the flag, else
// the environment; every file must be readable when the process starts.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { USAGE as GCS_USAGE, parseGcsFlags } from '../../../runtime/gcs/flags.ts';
import { USAGE as RAYLET_USAGE, parseRayletFlags } from '../../../runtime/raylet/flags.ts';
import { accessFlags } from '../../../runtime/process/flags.ts';

const dir = mkdtempSync(join(tmpdir(), 'orrery-access-'));
const file = (name: string): string => {
  const path = join(dir, name);
  writeFileSync(path, 'x', { mode: 0o600 });
  return path;
};
const creds = file('node.creds');
const other = file('other.creds');
const ca = file('ca.pem');
const cert = file('cert.pem');
const key = file('key.pem');
test.after(() => rmSync(dir, { recursive: true, force: true }));

const problem = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

test('no flags and no environment: no credentials, no TLS', () => {
  assert.equal(accessFlags(new Map(), {}), {});
});

test('--creds over ORRERY_CREDS; the environment when the flag is absent', () => {
  assert.equal(accessFlags(new Map([['--creds', creds]]), { ORRERY_CREDS: other }), { creds });
  assert.equal(accessFlags(new Map(), { ORRERY_CREDS: other }), { creds: other });
});

test('TLS files from flags or environment; a certificate needs its key', () => {
  assert.equal(accessFlags(new Map([['--tls-ca', ca]]), {}), { tls: { ca } });
  assert.equal(accessFlags(new Map([['--tls-cert', cert]]), { ORRERY_TLS_KEY: key }), { tls: { cert, key } });
  assert.match(problem(() => accessFlags(new Map([['--tls-cert', cert]]), {}))!, /^--tls-key: a client certificate needs both/);
  assert.match(problem(() => accessFlags(new Map([['--tls-key', key]]), {}))!, /^--tls-cert: a client certificate needs both/);
});

test('an unreadable file is an error naming the flag, or the variable it came from', () => {
  assert.match(problem(() => accessFlags(new Map([['--creds', join(dir, 'missing')]]), {}))!, /^--creds: cannot read .*missing: ENOENT$/);
  assert.match(problem(() => accessFlags(new Map(), { ORRERY_CREDS: join(dir, 'missing') }))!, /^--creds: cannot read .*missing \(from \$ORRERY_CREDS\): ENOENT$/);
  if (process.getuid?.() !== 0) {
    const locked = file('locked.creds');
    chmodSync(locked, 0o000);
    assert.match(problem(() => accessFlags(new Map([['--creds', locked]]), {}))!, /^--creds: cannot read .*: EACCES$/);
  }
});

test('the GCS and the raylet take them, and say so in their usage', () => {
  assert.equal(parseGcsFlags(['--creds', creds], {}).access, { creds });
  assert.equal(parseRayletFlags(['--creds', creds, '--tls-ca', ca], {}).access, { creds, tls: { ca } });
  assert.match(problem(() => parseRayletFlags(['--creds'], {}))!, /--creds: needs a value/);
  for (const usage of [GCS_USAGE, RAYLET_USAGE]) assert.match(usage, /--creds FILE \(or \$ORRERY_CREDS\)/);
});

test.run();
