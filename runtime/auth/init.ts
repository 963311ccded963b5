import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createUser } from '@nats-io/nkeys';
import { OrreryError } from '../../lib/errors.ts';
import { assertToken } from '../../protocols/subjects.ts';
import { ROLES, ROLE_SUMMARY, inboxPrefix, rolePermissions, type Role } from './roles.ts';

/**
 * `orrery auth init`: one nkey user per role, a nats-server configuration that knows them with
 * their subject permissions (roles.ts), and one credentials file per role. The directory is made
 * 0700 and every file in it 0600: the seeds are secrets, and so is the map of who is who.
 */
export interface AuthInitOptions {
  dir: string;
  /** Default 'default'. */
  cluster?: string;
  /** Replace existing files (new keys: every process must be given the new credentials). */
  force?: boolean;
}

export interface AuthFiles {
  readonly dir: string;
  readonly cluster: string;
  /** DIR/nats-server.conf */
  readonly config: string;
  /** DIR/<role>.creds */
  readonly creds: Readonly<Record<Role, string>>;
  /** The public key (not a secret) of each role's user. */
  readonly publicKeys: Readonly<Record<Role, string>>;
}

export const CONFIG_FILE = 'nats-server.conf';

export function credsFile(dir: string, role: Role): string {
  return join(dir, `${role}.creds`);
}

export function authInit(opts: AuthInitOptions): AuthFiles {
  const cluster = assertToken('cluster', opts.cluster ?? 'default');
  const dir = resolve(opts.dir);
  const config = join(dir, CONFIG_FILE);
  const paths = [config, ...ROLES.map((r) => credsFile(dir, r))];
  const existing = paths.filter((p) => existsSync(p));
  if (existing.length > 0 && !opts.force) {
    throw new OrreryError('AUTH_EXISTS', `${existing[0]} exists: orrery auth init does not replace keys unless --force is given (every process then needs the new credentials)`, {
      detail: { path: existing[0] },
    });
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const creds = {} as Record<Role, string>;
  const publicKeys = {} as Record<Role, string>;
  const users: string[] = [];
  for (const role of ROLES) {
    const kp = createUser();
    publicKeys[role] = kp.getPublicKey();
    const seed = new TextDecoder().decode(kp.getSeed());
    creds[role] = credsFile(dir, role);
    writeSecret(creds[role], credsText(cluster, role, seed));
    users.push(userEntry(cluster, role, publicKeys[role]));
  }
  writeSecret(config, configText(cluster, dir, users));
  return { dir, cluster, config, creds, publicKeys };
}

function writeSecret(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600); // a file that existed (--force) keeps its old mode through writeFileSync
}

function credsText(cluster: string, role: Role, seed: string): string {
  return [
    `# orrery credentials: role "${role}" of cluster "${cluster}" (${ROLE_SUMMARY[role]}).`,
    '# Secret: keep this file mode 0600 and give it only to the processes of this role.',
    `# orrery-cluster: ${cluster}`,
    `# orrery-role: ${role}`,
    `# orrery-inbox: ${inboxPrefix(cluster, role)}`,
    '',
    '-----BEGIN USER NKEY SEED-----',
    seed,
    '------END USER NKEY SEED------',
    '',
  ].join('\n');
}

const quote = (s: string): string => JSON.stringify(s);

function userEntry(cluster: string, role: Role, publicKey: string): string {
  const p = rolePermissions(cluster, role);
  const list = (items: readonly string[]) => `[${items.map(quote).join(', ')}]`;
  return [
    `    # ${role}: ${ROLE_SUMMARY[role]}`,
    '    {',
    `      nkey: ${quote(publicKey)}`,
    '      permissions: {',
    `        publish: { allow: ${list(p.publish)} }`,
    `        subscribe: { allow: ${list(p.subscribe)} }`,
    '      }',
    '    }',
  ].join('\n');
}

function configText(cluster: string, dir: string, users: string[]): string {
  return [
    `# nats-server configuration for the orrery cluster "${cluster}", written by orrery auth init.`,
    '# Run: nats-server -c ' + join(dir, CONFIG_FILE),
    '# Every client must present one of the credentials files next to this one (--creds FILE).',
    '# For other machines, listen beyond loopback and add TLS (docs/security.md):',
    '#   listen: 0.0.0.0:4222',
    '#   tls { cert_file: "server.pem", key_file: "server-key.pem" }',
    'listen: 127.0.0.1:4222',
    `jetstream { store_dir: ${quote(join(dir, 'jetstream'))} }`,
    'authorization {',
    '  users = [',
    users.join('\n'),
    '  ]',
    '}',
    '',
  ].join('\n');
}
