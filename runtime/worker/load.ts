import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CodeLoadError } from '../errors.ts';

/** Anything `new` can be applied to; the host checks that it is written as a class. */
export type ActorClass = new (...args: unknown[]) => object;

const MAX_REASON = 1000;

/**
 * Imports `moduleUrl` (a URL such as `import.meta.url`, or an absolute path) and returns its export
 * named `className`, which must be a class. Every failure is a CodeLoadError (CODE_LOAD_FAILED):
 * the module cannot be imported or throws while it loads, has no such export, or exports something
 * else under that name.
 */
export async function loadActorClass(moduleUrl: string, className: string): Promise<ActorClass> {
  let mod: Record<string, unknown>;
  try {
    mod = (await import(specifier(moduleUrl))) as Record<string, unknown>;
  } catch (err) {
    throw new CodeLoadError(moduleUrl, className, clip(err instanceof Error ? err.message : String(err)));
  }
  if (!Object.hasOwn(mod, className)) {
    throw new CodeLoadError(moduleUrl, className, `the module has no export named ${JSON.stringify(className)}`);
  }
  const value = mod[className];
  if (!isClass(value)) {
    throw new CodeLoadError(moduleUrl, className, `the export ${JSON.stringify(className)} is not a class (it is ${describe(value)})`);
  }
  return value;
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
