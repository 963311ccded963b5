import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CodeLoadError } from '../errors.ts';

/** Anything `new` can be applied to; the host checks that it is written as a class. */
export type ActorClass = new (...args: unknown[]) => object;

/** A task function as a worker host calls it. */
export type TaskFunctionImpl = (...args: unknown[]) => unknown;

const MAX_REASON = 1000;

/**
 * Imports `moduleUrl` (a URL such as `import.meta.url`, or an absolute path) and returns its export
 * named `className`, which must be a class. Every failure is a CodeLoadError (CODE_LOAD_FAILED):
 * the module cannot be imported or throws while it loads, has no such export, or exports something
 * else under that name.
 */
export async function loadActorClass(moduleUrl: string, className: string): Promise<ActorClass> {
  const key = `${moduleUrl}\u0000${className}`;
  const known = loadedClasses.get(key);
  if (known) return known;
  const value = await loadExport(moduleUrl, className);
  if (!isClass(value)) {
    throw new CodeLoadError(moduleUrl, className, `the export ${JSON.stringify(className)} is not a class (it is ${describe(value)})`);
  }
  loadedClasses.set(key, value);
  return value;
}

/**
 * Classes already loaded, by module URL and name: a module is evaluated once per process anyway,
 * and a host creating thousands of actors of one class need not go through the module loader and
 * the class check for each. Only successes are kept, so a module that could not be loaded is
 * tried again.
 */
const loadedClasses = new Map<string, ActorClass>();

/**
 * Imports `moduleUrl` and returns its export named `functionName`, which must be a function that is
 * not a class. Every failure is a CodeLoadError (CODE_LOAD_FAILED), as for actor classes.
 */
export async function loadTaskFunction(moduleUrl: string, functionName: string): Promise<TaskFunctionImpl> {
  const value = await loadExport(moduleUrl, functionName);
  if (typeof value !== 'function' || isClass(value)) {
    const what = isClass(value) ? 'a class' : describe(value);
    throw new CodeLoadError(moduleUrl, functionName, `the export ${JSON.stringify(functionName)} is not a function (it is ${what})`);
  }
  return value as TaskFunctionImpl;
}

async function loadExport(moduleUrl: string, name: string): Promise<unknown> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(specifier(moduleUrl))) as Record<string, unknown>;
  } catch (err) {
    throw new CodeLoadError(moduleUrl, name, clip(err instanceof Error ? err.message : String(err)));
  }
  if (!Object.hasOwn(mod, name)) {
    throw new CodeLoadError(moduleUrl, name, `the module has no export named ${JSON.stringify(name)}`);
  }
  return mod[name];
}

function specifier(moduleUrl: string): string {
  return isAbsolute(moduleUrl) ? pathToFileURL(moduleUrl).href : moduleUrl;
}

function isClass(value: unknown): value is ActorClass {
  return typeof value === 'function' && /^class\b/.test(Function.prototype.toString.call(value));
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'function') return 'a function';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function clip(text: string): string {
  const line = text.split('\n')[0];
  return line.length > MAX_REASON ? `${line.slice(0, MAX_REASON)}…` : line;
}
