import { readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkCodeSource, CodeSourceReason, CodeSourceRefusedError, parseShippedCode, withinRoots, type CodeSourcePolicy, type ShippedCode } from '../../protocols/code-source.ts';
import { CodeLoadError } from '../errors.ts';
import { resolveActorClass, resolveTaskFunction, type ActorClass, type Resolved, type TaskFunctionImpl } from './resolve-export.ts';

export type { ActorClass, TaskFunctionImpl };

const MAX_REASON = 1000;

/**
 * Imports `moduleUrl` and returns the actor class it exports under `className` (resolve-export.ts:
 * the class, or what defineActor returned). A URL the node does not accept (protocols/code-source.ts)
 * is CodeSourceRefusedError (CODE_SOURCE_REFUSED) and is never imported; every other failure is a
 * CodeLoadError (CODE_LOAD_FAILED): the module cannot be imported or throws while it loads, has no
 * such export, or exports something else under that name.
 */
export async function loadActorClass(moduleUrl: string, className: string, policy: CodeSourcePolicy = {}): Promise<ActorClass> {
  checkCodeSource(moduleUrl, policy);
  const key = `${moduleUrl}\u0000${className}`;
  const known = loadedClasses.get(key);
  if (known) return known;
  const cls = found(moduleUrl, className, resolveActorClass(await importModule(moduleUrl, className, policy), className));
  loadedClasses.set(key, cls);
  return cls;
}

/**
 * Classes already loaded, by module URL and name: a module is evaluated once per process anyway,
 * and a host creating thousands of actors of one class need not go through the module loader and
 * the class check for each. Only successes are kept, so a module that could not be loaded is
 * tried again.
 */
const loadedClasses = new Map<string, ActorClass>();

/**
 * Imports `moduleUrl` and returns the task function it exports under `functionName` (the function,
 * or what defineTask returned). Failures are as for actor classes.
 */
export async function loadTaskFunction(moduleUrl: string, functionName: string, policy: CodeSourcePolicy = {}): Promise<TaskFunctionImpl> {
  return found(moduleUrl, functionName, resolveTaskFunction(await importModule(moduleUrl, functionName, policy), functionName));
}

function found<T>(moduleUrl: string, name: string, resolved: Resolved<T>): T {
  if (!resolved.ok) throw new CodeLoadError(moduleUrl, name, resolved.reason);
  return resolved.value;
}

/** The module's namespace, once its URL is accepted here: the last check before any of its code runs. */
async function importModule(moduleUrl: string, name: string, policy: CodeSourcePolicy): Promise<Record<string, unknown>> {
  const shipped = parseShippedCode(moduleUrl);
  // shipped code: from this node's cache, verified against its hash there (runtime/code/cache.ts); code roots are for file: URLs
  if (shipped) return importModule(await materialize(moduleUrl, shipped, name, policy), name, {});
  acceptHere(moduleUrl, policy);
  try {
    return (await import(moduleUrl)) as Record<string, unknown>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException)?.code === 'ERR_UNKNOWN_FILE_EXTENSION' && TYPESCRIPT.test(new URL(moduleUrl).pathname)) return importTypeScript(moduleUrl, name);
    throw new CodeLoadError(moduleUrl, name, clip(err instanceof Error ? err.message : String(err)));
  }
}

/** The file: URL of a shipped module in this node's cache, fetched first if need be; CodeLoadError when it cannot be (not in the store, corrupt, no store). */
async function materialize(moduleUrl: string, code: ShippedCode, name: string, policy: CodeSourcePolicy): Promise<string> {
  if (policy.shipped === undefined) throw new CodeLoadError(moduleUrl, name, 'shipped code, and this host has no code store to fetch it from');
  try {
    return pathToFileURL(await policy.shipped.materialize(code)).href;
  } catch (err) {
    throw new CodeLoadError(moduleUrl, name, clip(err instanceof Error ? err.message : String(err)));
  }
}

const TYPESCRIPT = /\.[cm]?tsx?$/;

/**
 * A TypeScript module on a host that runs on plain node (a raylet started with `orrery start`):
 * registers tsx's loader in this process — found beside the module (the user's project) or beside
 * orrery — and imports the module again. Without tsx anywhere the failure says what to install. The
 * loader is registered once per host, and only when a .ts module is first asked for.
 */
async function importTypeScript(moduleUrl: string, name: string): Promise<Record<string, unknown>> {
  if (!(await registerTypeScript(moduleUrl))) {
    throw new CodeLoadError(moduleUrl, name, 'a TypeScript module, and this node has no TypeScript loader: install tsx where the module lives (npm install --save-dev tsx), or ship the compiled .js');
  }
  try {
    // the failed first import stays in the module map under its URL: ask again under another
    return (await import(`${moduleUrl}${moduleUrl.includes('?') ? '&' : '?'}orrery-ts`)) as Record<string, unknown>;
  } catch (err) {
    throw new CodeLoadError(moduleUrl, name, clip(err instanceof Error ? err.message : String(err)));
  }
}

let typescript: Promise<boolean> | undefined;

function registerTypeScript(moduleUrl: string): Promise<boolean> {
  typescript ??= (async () => {
    for (const from of [fileURLToPath(moduleUrl), fileURLToPath(import.meta.url)]) {
      const api = tsxApiOf(from);
      if (api === undefined) continue;
      try {
        const { register } = (await import(pathToFileURL(api).href)) as { register?: () => unknown };
        if (typeof register !== 'function') continue;
        register();
        return true;
      } catch {
        // a tsx this version cannot use: try the next place
      }
    }
    return false;
  })();
  return typescript;
}

/** The ES-module entry of tsx's loader API (`tsx/esm/api`) as seen from `from`, if tsx is there. */
function tsxApiOf(from: string): string | undefined {
  try {
    const manifest = createRequire(from).resolve('tsx/package.json');
    const exported = (JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: Record<string, unknown> }).exports?.['./esm/api'] as { import?: string | { default?: string } } | undefined;
    const entry = typeof exported?.import === 'string' ? exported.import : exported?.import?.default;
    return entry === undefined ? undefined : join(dirname(manifest), entry);
  } catch {
    return undefined;
  }
}

/**
 * The URL check with the file system: under code roots, the file the module loader would open (its
 * real path, symbolic links followed, as Node's loader does) must lie under a root's real path too.
 * A file that does not exist is left to the import, which fails with "cannot find module".
 */
function acceptHere(moduleUrl: string, policy: CodeSourcePolicy): void {
  const path = checkCodeSource(moduleUrl, policy);
  if (policy.roots === undefined || policy.roots.length === 0) return;
  const real = realOrSelf(path);
  if (!withinRoots(real, policy.roots.map(realOrSelf))) throw new CodeSourceRefusedError(moduleUrl, CodeSourceReason.OUTSIDE_ROOTS);
}

function realOrSelf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function clip(text: string): string {
  const line = text.split('\n')[0];
  return line.length > MAX_REASON ? `${line.slice(0, MAX_REASON)}…` : line;
}
