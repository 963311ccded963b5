import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HttpError } from './http.ts';

/** The page's files: runtime/dashboard/public in the source tree, dist/runtime/dashboard/public when built. */
export const PUBLIC_DIR = fileURLToPath(new URL('./public/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** Serves one file of the page (`/` is index.html); nothing outside PUBLIC_DIR. */
export async function serveStatic(pathname: string, res: ServerResponse, head: boolean): Promise<void> {
  const rel = pathname === '/' ? 'index.html' : decodeURIComponent(pathname.slice(1));
  const file = normalize(join(PUBLIC_DIR, rel));
  const type = TYPES[extname(file)];
  if (!file.startsWith(PUBLIC_DIR.endsWith(sep) ? PUBLIC_DIR : PUBLIC_DIR + sep) || type === undefined) {
    throw new HttpError(404, 'NOT_FOUND', `no file ${pathname}`);
  }
  let body: Buffer;
  try {
    body = await readFile(file);
  } catch {
    throw new HttpError(404, 'NOT_FOUND', `no file ${pathname}`);
  }
  res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'cache-control': 'no-cache' });
  res.end(head ? undefined : body);
}
