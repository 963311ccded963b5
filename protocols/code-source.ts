import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OrreryError } from '../lib/errors.ts';
import { str, type Validator } from './validate.ts';

/**
 * Which code a worker host may load: the one place that decides it. An actor class or task
 * function is named by a module URL (`import.meta.url` of the module that exports it), and a
 * worker host imports that module, running whatever it holds. So the URL decides what code runs on
 * a node, and a hostile peer that can publish on the bus could otherwise name `node:child_process`,
 * a `data:text/javascript,…` module or a module on some web server.
 *
 * Accepted today: `file:` URLs of this machine (no host, or `localhost`), and when the node has code
 * roots (`--code-root` / ORRERY_CODE_ROOTS) only files under one of them. Everything else is
 * refused with CODE_SOURCE_REFUSED:
 *
 *   the client  at defineActor/defineTask, before anything is sent
 *   the GCS     register_actor (the wire validator of `code.moduleUrl`, below)
 *   a raylet    submit_task and create_actor (the same validator), create_actor also against its
 *               code roots (a task may be spilled elsewhere, so its roots wait for the host)
 *   a host      leased_task (the validator), and before every import with the node's code roots
 *               (runtime/worker/load.ts): the check nothing can go around
 *
 * Code shipped with a job (runtime/code/, docs/code-shipping.md) is named
 * `orrery-code:<sha256 of the bundle, 64 hex>/<path of the module inside the bundle>`: accepted on
 * every node whatever its code roots, since a host loads it only from the cluster's code store,
 * verified against the hash, into its own cache (the store is written only by the roles that may
 * create actors: docs/security.md). The path is relative, `/`-separated, with no `.`, `..` or empty
 * segment, so it cannot leave the bundle's directory.
 */
export interface CodeSourcePolicy {
  /** Absolute directories; when given and non-empty, only files under one of them are accepted. */
  readonly roots?: readonly string[];
  /** Where a host fetches shipped code (runtime/code/cache.ts); absent: shipped code cannot load here. */
  readonly shipped?: ShippedCodeSource;
}

/** A host's way to shipped code: the bundle fetched (once) into its cache, verified; resolves with the module's file path there. */
export interface ShippedCodeSource {
  materialize(code: ShippedCode): Promise<string>;
}

/** The scheme of shipped code. */
export const SHIPPED_CODE_SCHEME = 'orrery-code:';

/** A module inside a shipped bundle: the bundle's hash (64 lowercase hex) and the module's path in it. */
export interface ShippedCode {
  readonly hash: string;
  readonly path: string;
}

const BUNDLE_HASH = /^[0-9a-f]{64}$/;
const MAX_BUNDLE_PATH = 1024;

/** The URL naming `path` inside the bundle `hash`. */
export function shippedCodeUrl(code: ShippedCode): string {
  return `${SHIPPED_CODE_SCHEME}${code.hash}/${code.path}`;
}

/** True when `path` is a safe relative path inside a bundle: `/`-separated, no `.`, `..` or empty segments, no `\\` or NUL. */
export function isBundlePath(path: string): boolean {
  if (path.length === 0 || path.length > MAX_BUNDLE_PATH || /[\\\0]/.test(path)) return false;
  return path.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

/** The hash and path of a shipped-code URL, or undefined when `moduleUrl` is not one (or a malformed one). */
export function parseShippedCode(moduleUrl: string): ShippedCode | undefined {
  if (!moduleUrl.startsWith(SHIPPED_CODE_SCHEME)) return undefined;
  const rest = moduleUrl.slice(SHIPPED_CODE_SCHEME.length);
  const slash = rest.indexOf('/');
  if (slash === -1) return undefined;
  const hash = rest.slice(0, slash);
  const path = rest.slice(slash + 1);
  if (!BUNDLE_HASH.test(hash) || !isBundlePath(path)) return undefined;
  return { hash, path };
}

/** Why a module URL is refused: stable strings (the URL itself goes in the error's detail). */
export const CodeSourceReason = {
  NOT_A_URL: 'not an absolute URL',
  SCHEME: 'only file: URLs and shipped code (orrery-code:) are accepted',
  REMOTE_FILE: 'a file: URL must not name a host',
  NOT_A_PATH: 'not a file path on this machine',
  BAD_SHIPPED: 'shipped code must be orrery-code:<64 hex>/<relative path without . or .. segments>',
  OUTSIDE_ROOTS: 'outside the code roots of this node',
} as const;
export type CodeSourceReason = (typeof CodeSourceReason)[keyof typeof CodeSourceReason];

/** Accepted: a file path on this machine, or (`shipped`) a module of a shipped bundle, `path` then its path inside the bundle. */
export type CodeSourceVerdict =
  | { readonly ok: true; readonly path: string; readonly shipped?: ShippedCode }
  | { readonly ok: false; readonly reason: CodeSourceReason; readonly scheme?: string };

/** Longest part of a refused URL kept in an error (a `data:` URL can hold a whole program). */
const MAX_URL_IN_ERROR = 200;

/** A module URL that no worker host may load. */
export class CodeSourceRefusedError extends OrreryError {
  override name = 'CodeSourceRefusedError';
  constructor(moduleUrl: string, reason: string, extra: { scheme?: string; path?: string } = {}) {
    const shown = moduleUrl.length > MAX_URL_IN_ERROR ? `${moduleUrl.slice(0, MAX_URL_IN_ERROR)}…` : moduleUrl;
    super('CODE_SOURCE_REFUSED', `refused to load code from ${JSON.stringify(shown)}: ${reason}`, { detail: { moduleUrl: shown, reason, ...extra } });
  }
}

/** Decides whether `moduleUrl` may be loaded under `policy`; pure (no file system access). */
export function codeSourceVerdict(moduleUrl: string, policy: CodeSourcePolicy = {}): CodeSourceVerdict {
  if (moduleUrl.startsWith(SHIPPED_CODE_SCHEME)) {
    const shipped = parseShippedCode(moduleUrl);
    return shipped === undefined ? { ok: false, reason: CodeSourceReason.BAD_SHIPPED } : { ok: true, path: shipped.path, shipped };
  }
  if (!URL.canParse(moduleUrl)) return { ok: false, reason: CodeSourceReason.NOT_A_URL };
  const url = new URL(moduleUrl);
  if (url.protocol !== 'file:') return { ok: false, reason: CodeSourceReason.SCHEME, scheme: url.protocol };
  if (url.host !== '' && url.host !== 'localhost') return { ok: false, reason: CodeSourceReason.REMOTE_FILE };
  let path: string;
  try {
    path = fileURLToPath(url);
  } catch {
    return { ok: false, reason: CodeSourceReason.NOT_A_PATH };
  }
  if (!withinRoots(path, policy.roots)) return { ok: false, reason: CodeSourceReason.OUTSIDE_ROOTS };
  return { ok: true, path };
}

/** The file path `moduleUrl` names (for shipped code: the module's path inside its bundle), or CodeSourceRefusedError. */
export function checkCodeSource(moduleUrl: string, policy: CodeSourcePolicy = {}): string {
  const verdict = codeSourceVerdict(moduleUrl, policy);
  if (!verdict.ok) throw new CodeSourceRefusedError(moduleUrl, verdict.reason, verdict.scheme === undefined ? {} : { scheme: verdict.scheme });
  return verdict.path;
}

/** True when there are no roots, or `path` (absolute) is one of them or lies beneath one. */
export function withinRoots(path: string, roots: readonly string[] | undefined): boolean {
  if (roots === undefined || roots.length === 0) return true;
  return roots.some((root) => {
    const rel = relative(resolve(root), resolve(path));
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  });
}

/**
 * `code.moduleUrl` of actor and task messages: a string the policy without roots accepts. Every
 * process that decodes a register_actor, create_actor, submit_task or leased_task refuses any other
 * with CODE_SOURCE_REFUSED (not INVALID_MESSAGE: the message is well formed, its code is not
 * accepted). Code roots are a node's own setting, checked by its raylet and worker hosts.
 */
export const codeModuleUrl: Validator<string> = (value, path) => {
  const url = str({ min: 1, max: 4096 })(value, path);
  checkCodeSource(url);
  return url;
};
