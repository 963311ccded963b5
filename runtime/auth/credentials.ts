import { readFileSync, statSync } from 'node:fs';
import { OrreryError } from '../../lib/errors.ts';
import { isRole, type Role } from './roles.ts';

/**
 * A credentials file: what a process presents to the NATS server. Two forms are read:
 *
 * - orrery's own, written by `orrery auth init`: a few `# orrery-…:` header lines (cluster, role,
 *   inbox prefix) and the user's nkey seed between NATS's usual armour lines. The server knows the
 *   user by the seed's public key (nats-server.conf); the seed signs the server's nonce.
 * - a standard NATS `.creds` file (a user JWT and its seed), for servers run with NATS accounts.
 *
 * The seed is the secret: it is read here and handed to nats.js, and never appears in an error,
 * a log line or a process's arguments (files or environment only, so nothing shows in `ps`).
 */
export interface Credentials {
  /** The file it came from (a path is not a secret). */
  readonly path: string;
  readonly kind: 'nkey' | 'jwt';
  /** The raw bytes nats.js's authenticator takes: the seed (nkey) or the whole file (jwt). */
  readonly secret: Uint8Array;
  readonly role?: Role;
  readonly cluster?: string;
  /** Where this role's request answers arrive; only this prefix is subscribable for it. */
  readonly inboxPrefix?: string;
}

export class CredentialsError extends OrreryError {
  override name = 'CredentialsError';
  constructor(readonly path: string, reason: string, options: { cause?: unknown } = {}) {
    super('INVALID_CREDENTIALS', `credentials file ${path}: ${reason}`, { ...options, detail: { path, reason } });
  }
}

const SEED_BLOCK = /-{3,}BEGIN USER NKEY SEED-{3,}\s*\n\s*(S[A-Z2-7]{50,})\s*\n\s*-{3,}END USER NKEY SEED-{3,}/;
const JWT_BLOCK = /-{3,}BEGIN NATS USER JWT-{3,}/;
const HEADER = /^#\s*orrery-(cluster|role|inbox):\s*(\S+)\s*$/gm;

/** Reads and checks a credentials file; a missing, unreadable or malformed one is INVALID_CREDENTIALS. */
export function readCredentials(path: string): Credentials {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CredentialsError(path, code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : `cannot read it (${code ?? String(err)})`, { cause: err });
  }
  const headers: Record<string, string> = {};
  for (const m of text.matchAll(HEADER)) headers[m[1]] = m[2];
  const role = headers.role;
  if (role !== undefined && !isRole(role)) throw new CredentialsError(path, `unknown orrery-role ${JSON.stringify(role)}`);
  const common = { path, role: role as Role | undefined, cluster: headers.cluster, inboxPrefix: headers.inbox };
  if (common.inboxPrefix !== undefined && !/^[A-Za-z0-9_$-]+(\.[A-Za-z0-9_$-]+)*$/.test(common.inboxPrefix)) {
    throw new CredentialsError(path, 'orrery-inbox is not a subject prefix');
  }
  if (JWT_BLOCK.test(text)) {
    if (!SEED_BLOCK.test(text)) throw new CredentialsError(path, 'a NATS user JWT without its nkey seed');
    return { ...common, kind: 'jwt', secret: new TextEncoder().encode(text) };
  }
  const seed = SEED_BLOCK.exec(text)?.[1];
  if (seed === undefined || !seed.startsWith('SU')) {
    throw new CredentialsError(path, 'no user nkey seed in it (expected a file written by `orrery auth init` or a NATS .creds file)');
  }
  return { ...common, kind: 'nkey', secret: new TextEncoder().encode(seed) };
}

/**
 * Whether others than the owner can read the file (like ssh, orrery says so: a seed anyone on the
 * machine can read is anyone's). Undefined when the mode cannot be read (e.g. on Windows).
 */
export function readableByOthers(path: string): boolean | undefined {
  try {
    return (statSync(path).mode & 0o077) !== 0;
  } catch {
    return undefined;
  }
}

/** `nats://user:secret@host` → `nats://user:***@host`: an address is printed, its password never. */
export function redactAddress(address: string): string {
  return address.replace(/(\w+:\/\/)([^/@\s,]*)@/g, (_m, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return colon < 0 ? `${scheme}***@` : `${scheme}${userinfo.slice(0, colon)}:***@`;
  });
}
