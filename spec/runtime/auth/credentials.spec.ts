import { mkdtempSync, rmSync, statSync, writeFileSync, readFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { fromSeed } from '@nats-io/nkeys';
import { readCredentials, readableByOthers, redactAddress } from '../../../runtime/auth/credentials.ts';
import { authAdd, authInit, CONFIG_FILE, USERS_FILE } from '../../../runtime/auth/init.ts';
import { ROLES, inboxPrefix } from '../../../runtime/auth/roles.ts';
import { findNatsServer } from '../../../runtime/local/nats-server.ts';

const dir = mkdtempSync(join(tmpdir(), 'orrery-creds-spec-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
    return undefined;
  } catch (err) {
    return (err as { code?: string }).code;
  }
};

test('auth init: one credentials file per role, 0600 in a 0700 directory; the configuration knows each public key', () => {
  const d = join(dir, 'a');
  const files = authInit({ dir: d, cluster: 'c1' });
  assert.is(statSync(d).mode & 0o777, 0o700);
  const config = readFileSync(files.config, 'utf8');
  for (const role of ROLES) {
    assert.is(statSync(files.creds[role]).mode & 0o777, 0o600, role);
    const c = readCredentials(files.creds[role]);
    assert.is(c.kind, 'nkey');
    assert.is(c.role, role);
    assert.is(c.cluster, 'c1');
    assert.is(c.inboxPrefix, inboxPrefix('c1', role));
    // the seed in the file is the key pair whose public key the server knows for this role
    const publicKey = fromSeed(c.secret).getPublicKey();
    assert.is(publicKey, files.publicKeys[role]);
    assert.ok(config.includes(`nkey: "${publicKey}"`), `${role}'s user is in the configuration`);
    assert.not.ok(config.includes(new TextDecoder().decode(c.secret)), 'no seed in the configuration');
  }
  assert.is(statSync(files.config).mode & 0o777, 0o600);
  assert.is(readableByOthers(files.creds.driver), false);
});

test('auth init refuses to replace keys without force; with force the keys are new', () => {
  const d = join(dir, 'b');
  const first = authInit({ dir: d });
  const before = readFileSync(first.creds.gcs, 'utf8');
  assert.is(codeOf(() => authInit({ dir: d })), 'AUTH_EXISTS');
  assert.is(readFileSync(first.creds.gcs, 'utf8'), before, 'the refused run changed nothing');
  const second = authInit({ dir: d, force: true });
  assert.is.not(second.publicKeys.gcs, first.publicKeys.gcs);
  assert.is(statSync(second.creds.gcs).mode & 0o777, 0o600);
});

test('auth init refuses a cluster name that is not one subject token', () => {
  assert.is(codeOf(() => authInit({ dir: join(dir, 'c'), cluster: 'a.b' })), 'PROTOCOL');
});

test('nats-server accepts the configuration (nats-server -t)', () => {
  const bin = findNatsServer();
  assert.ok(bin, 'nats-server is installed (.ci/run installs it)');
  const d = join(dir, 'd');
  authInit({ dir: d, cluster: 'c1' });
  const r = spawnSync(bin!, ['-t', '-c', join(d, CONFIG_FILE)], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
});

test('auth add: a client user of its own, with its own inbox, in a configuration nats-server accepts; bad roles, names and repeats refused', () => {
  const d = join(dir, 'added');
  const base = authInit({ dir: d, cluster: 'c1' });
  const added = authAdd({ dir: d, role: 'driver', name: 'billing' });
  assert.is(added.creds, join(d, 'driver-billing.creds'));
  assert.is(statSync(added.creds).mode & 0o777, 0o600);
  const c = readCredentials(added.creds);
  assert.is(c.role, 'driver');
  assert.is(c.inboxPrefix, '_INBOX.c1.driver.billing');
  assert.is(fromSeed(c.secret).getPublicKey(), added.publicKey);
  const config = readFileSync(base.config, 'utf8');
  for (const role of ROLES) assert.ok(config.includes(`nkey: "${base.publicKeys[role]}"`), `${role} kept`);
  assert.ok(config.includes(`nkey: "${added.publicKey}"`), 'the new user is in the configuration');
  assert.ok(config.includes('"_INBOX.c1.driver.billing.>"'), 'subscribing its own inbox');
  assert.is(statSync(join(d, USERS_FILE)).mode & 0o777, 0o600);
  const bin = findNatsServer();
  const r = spawnSync(bin!, ['-t', '-c', base.config], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  assert.is(codeOf(() => authAdd({ dir: d, role: 'driver', name: 'billing' })), 'AUTH_EXISTS');
  assert.is(codeOf(() => authAdd({ dir: d, role: 'node' as never, name: 'x' })), 'INVALID_OPTION');
  assert.is(codeOf(() => authAdd({ dir: d, role: 'driver', name: 'main' })), 'INVALID_OPTION');
  assert.is(codeOf(() => authAdd({ dir: d, role: 'driver', name: 'a.b' })), 'INVALID_OPTION');
  assert.is(codeOf(() => authAdd({ dir: join(dir, 'nothing-here'), role: 'driver', name: 'x' })), 'AUTH_MISSING');
  const again = authAdd({ dir: d, role: 'driver', name: 'billing', force: true });
  assert.is.not(again.publicKey, added.publicKey);
  const after = readFileSync(base.config, 'utf8');
  assert.not.ok(after.includes(added.publicKey), 'the replaced key is gone');
  assert.ok(after.includes(again.publicKey));
});

test('readCredentials: a missing file, no seed, an unknown role and a JWT without its seed are INVALID_CREDENTIALS naming the file', () => {
  const cases: [string, string | undefined, RegExp][] = [
    ['missing.creds', undefined, /no such file/],
    ['empty.creds', '', /no user nkey seed/],
    ['account.creds', '-----BEGIN USER NKEY SEED-----\nSAAGNJOZTRPYYXG2NJX3ZNGXYUSDYX2BWO447W3SHG6XQ7U66RWHQ3JUXM\n------END USER NKEY SEED------\n', /no user nkey seed/],
    ['role.creds', '# orrery-role: root\n', /unknown orrery-role "root"/],
    ['jwt.creds', '-----BEGIN NATS USER JWT-----\neyJ0\n------END NATS USER JWT------\n', /JWT without its nkey seed/],
  ];
  for (const [name, text, reason] of cases) {
    const path = join(dir, name);
    if (text !== undefined) writeFileSync(path, text, { mode: 0o600 });
    try {
      readCredentials(path);
      assert.unreachable(name);
    } catch (err) {
      const e = err as Error & { code: string };
      assert.is(e.code, 'INVALID_CREDENTIALS', name);
      assert.ok(e.message.includes(path), `${name}: names the file`);
      assert.match(e.message, reason, name);
    }
  }
});

test('a standard NATS .creds file (JWT and seed) is read as one', () => {
  const path = join(dir, 'nats.creds');
  const seed = new TextDecoder().decode(readCredentials(authInit({ dir: join(dir, 'e') }).creds.driver).secret);
  writeFileSync(path, `-----BEGIN NATS USER JWT-----\neyJ0eXAiOiJKV1QifQ.e30.sig\n------END NATS USER JWT------\n\n-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n`, { mode: 0o600 });
  const c = readCredentials(path);
  assert.is(c.kind, 'jwt');
  assert.is(c.inboxPrefix, undefined);
});

test('readableByOthers says when a credentials file is group- or world-readable', () => {
  const path = join(dir, 'loose.creds');
  writeFileSync(path, 'x');
  chmodSync(path, 0o644);
  assert.is(readableByOthers(path), true);
  chmodSync(path, 0o600);
  assert.is(readableByOthers(path), false);
});

test('redactAddress hides passwords and tokens, keeps users, hosts and plain addresses', () => {
  assert.is(redactAddress('nats://bob:s3cret@h:4222'), 'nats://bob:***@h:4222');
  assert.is(redactAddress('nats://tok3n@h:4222,nats://a:b@h2:1'), 'nats://***@h:4222,nats://a:***@h2:1');
  assert.is(redactAddress('nats://127.0.0.1:4222'), 'nats://127.0.0.1:4222');
  assert.is(redactAddress('cannot connect: tls://u:p@x: refused'), 'cannot connect: tls://u:***@x: refused');
});

test.run();
