import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createUser } from '@nats-io/nkeys';
import { OrreryError } from '../../lib/errors.ts';
import { assertToken } from '../../protocols/subjects.ts';
import { CLIENT_ROLES, MAIN_USER, ROLES, ROLE_SUMMARY, inboxPrefix, isClientRole, isRole, rolePermissions, type ClientRole, type Role } from './roles.ts';

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
/** The users the configuration is written from: role, user name and public key each (no secret). */
export const USERS_FILE = 'users.json';

interface UserEntry {
  readonly role: Role;
  readonly user: string;
  readonly publicKey: string;
}

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
  const users: UserEntry[] = [];
  for (const role of ROLES) {
    const kp = createUser();
    publicKeys[role] = kp.getPublicKey();
    const seed = new TextDecoder().decode(kp.getSeed());
    creds[role] = credsFile(dir, role);
    writeSecret(creds[role], credsText(cluster, role, MAIN_USER, seed));
    users.push({ role, user: MAIN_USER, publicKey: publicKeys[role] });
  }
  writeUsers(dir, cluster, users);
  return { dir, cluster, config, creds, publicKeys };
}

export interface AuthAddOptions {
  /** A directory `orrery auth init` wrote. */
  dir: string;
  role: ClientRole;
  /** The user's name: its credentials file is DIR/<role>-<name>.creds, its inbox `_INBOX.<cluster>.<role>.<name>`. */
  name: string;
  /** Replace this user's keys. */
  force?: boolean;
}

/**
 * `orrery auth add`: one more client user — a driver, observer or admin of its own, with its own
 * inbox, so it cannot read the answers other clients of its role get. Rewrites the configuration;
 * the NATS server takes it on a reload (`nats-server --signal reload`, or SIGHUP).
 */
export function authAdd(opts: AuthAddOptions): { creds: string; config: string; publicKey: string } {
  const dir = resolve(opts.dir);
  if (!isRole(opts.role) || !isClientRole(opts.role)) {
    throw new OrreryError('INVALID_OPTION', `a user of its own is for a client role (${CLIENT_ROLES.join(', ')}), not ${JSON.stringify(opts.role)}`, { detail: { option: 'role', value: opts.role } });
  }
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(opts.name) || opts.name === MAIN_USER) {
    throw new OrreryError('INVALID_OPTION', `a user name is 1-64 of a-z, 0-9, _ and -, starting with a letter or digit, and not ${JSON.stringify(MAIN_USER)}: ${JSON.stringify(opts.name)}`, {
      detail: { option: 'name', value: opts.name },
    });
  }
  const { cluster, users } = readUsers(dir);
  const path = join(dir, `${opts.role}-${opts.name}.creds`);
  const known = users.find((u) => u.role === opts.role && u.user === opts.name);
  if ((known || existsSync(path)) && !opts.force) {
    throw new OrreryError('AUTH_EXISTS', `${path} exists: orrery auth add does not replace keys unless --force is given`, { detail: { path } });
  }
  const kp = createUser();
  const publicKey = kp.getPublicKey();
  writeSecret(path, credsText(cluster, opts.role, opts.name, new TextDecoder().decode(kp.getSeed())));
  writeUsers(dir, cluster, [...users.filter((u) => u !== known), { role: opts.role, user: opts.name, publicKey }]);
  return { creds: path, config: join(dir, CONFIG_FILE), publicKey };
}

function writeUsers(dir: string, cluster: string, users: readonly UserEntry[]): void {
  writeSecret(join(dir, USERS_FILE), `${JSON.stringify({ cluster, users }, null, 2)}\n`);
  writeSecret(join(dir, CONFIG_FILE), configText(cluster, dir, users.map((u) => userEntry(cluster, u))));
}

function readUsers(dir: string): { cluster: string; users: UserEntry[] } {
  const path = join(dir, USERS_FILE);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new OrreryError('AUTH_MISSING', `${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): run orrery auth init --dir ${dir} first`, { detail: { path } });
  }
  const p = parsed as { cluster?: unknown; users?: unknown };
  const users = Array.isArray(p.users) ? p.users : [];
  const ok = typeof p.cluster === 'string' && users.every((u: UserEntry) => u && isRole(u.role) && typeof u.user === 'string' && typeof u.publicKey === 'string');
  if (!ok) throw new OrreryError('AUTH_MISSING', `${path} is not a users file orrery auth init wrote`, { detail: { path } });
  return { cluster: p.cluster as string, users: users as UserEntry[] };
}

function writeSecret(path: string, text: string): void {
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600); // a file that existed (--force) keeps its old mode through writeFileSync
}

function credsText(cluster: string, role: Role, user: string, seed: string): string {
  return [
    `# orrery credentials: role "${role}"${user === MAIN_USER ? '' : `, user "${user}"`} of cluster "${cluster}" (${ROLE_SUMMARY[role]}).`,
    '# Secret: keep this file mode 0600 and give it only to the processes of this role.',
    `# orrery-cluster: ${cluster}`,
    `# orrery-role: ${role}`,
    `# orrery-inbox: ${inboxPrefix(cluster, role, user)}`,
    '',
    '-----BEGIN USER NKEY SEED-----',
    seed,
    '------END USER NKEY SEED------',
    '',
  ].join('\n');
}

const quote = (s: string): string => JSON.stringify(s);

function userEntry(cluster: string, { role, user, publicKey }: UserEntry): string {
  const p = rolePermissions(cluster, role, user);
  const list = (items: readonly string[]) => `[${items.map(quote).join(', ')}]`;
  return [
    `    # ${role}${user === MAIN_USER ? '' : ` (${user})`}: ${ROLE_SUMMARY[role]}`,
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
