import { createHash } from 'node:crypto';
import { OrreryError } from '../lib/errors.ts';
import { isBundlePath } from './code-source.ts';

/**
 * A bundle of shipped code (docs/code-shipping.md) as it is stored: one object in the cluster's code
 * store, named by its hash. The hash is content addressing: sha256 of the manifest, a text of one
 * line per file, sorted by path, `<sha256 of the file> <size> <path>` (as `sha256sum` prints them,
 * with the size between), after the line `orrery-bundle-v1`. So two drivers shipping the same files
 * make the same bundle, and a node checks what it fetched against the name it asked for: every
 * file against its line, the manifest against the hash.
 *
 * Bytes: `ORRB1\n`, the manifest's length (uint32, big-endian), the manifest (UTF-8), then the
 * files' contents in manifest order.
 */
export interface BundleFile {
  /** Relative, `/`-separated (isBundlePath). */
  readonly path: string;
  readonly data: Uint8Array;
}

export interface EncodedBundle {
  readonly hash: string;
  readonly bytes: Uint8Array;
}

const MAGIC = Buffer.from('ORRB1\n');
const HEADER = 'orrery-bundle-v1';
const MAX_FILES = 100_000;

/** A stored bundle that is not what its name says, or not a bundle at all. */
export class BundleCorruptError extends OrreryError {
  override name = 'BundleCorruptError';
  constructor(readonly hash: string, readonly problem: string) {
    super('BUNDLE_CORRUPT', `shipped code ${hash.slice(0, 12)}… failed verification: ${problem}`, { detail: { hash, problem } });
  }
}

export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** The manifest text of files whose hashes are known (sorted here), and its hash: the bundle's name. */
export function bundleManifest(files: readonly { readonly path: string; readonly size: number; readonly sha256: string }[]): { hash: string; text: string } {
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const lines = [HEADER, ...sorted.map((f) => `${f.sha256} ${f.size} ${f.path}`)];
  const text = `${lines.join('\n')}\n`;
  return { hash: sha256Hex(text), text };
}

export function encodeBundle(files: readonly BundleFile[]): EncodedBundle {
  const seen = new Set<string>();
  for (const f of files) {
    if (!isBundlePath(f.path)) throw new OrreryError('INVALID_ARGUMENT', `not a path inside a bundle: ${JSON.stringify(f.path)}`, { detail: { path: f.path } });
    if (seen.has(f.path)) throw new OrreryError('INVALID_ARGUMENT', `a bundle holds ${f.path} twice`, { detail: { path: f.path } });
    seen.add(f.path);
  }
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const { hash, text } = bundleManifest(sorted.map((f) => ({ path: f.path, size: f.data.byteLength, sha256: sha256Hex(f.data) })));
  const manifest = Buffer.from(text, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(manifest.byteLength);
  return { hash, bytes: Buffer.concat([MAGIC, length, manifest, ...sorted.map((f) => f.data)]) };
}

/** The files of `bytes`, verified to be the bundle named `hash`; BundleCorruptError otherwise. */
export function decodeBundle(hash: string, bytes: Uint8Array): BundleFile[] {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bad = (problem: string): never => {
    throw new BundleCorruptError(hash, problem);
  };
  if (buf.byteLength < MAGIC.byteLength + 4 || !buf.subarray(0, MAGIC.byteLength).equals(MAGIC)) bad('not a bundle (no ORRB1 header)');
  const manifestEnd = MAGIC.byteLength + 4 + buf.readUInt32BE(MAGIC.byteLength);
  if (manifestEnd > buf.byteLength) bad('manifest longer than the bundle');
  const text = buf.subarray(MAGIC.byteLength + 4, manifestEnd).toString('utf8');
  if (sha256Hex(text) !== hash) bad('the manifest does not hash to the name');
  const lines = text.split('\n');
  if (lines[0] !== HEADER || lines.at(-1) !== '') bad('malformed manifest');
  const entries = lines.slice(1, -1);
  if (entries.length > MAX_FILES) bad('too many files');
  const files: BundleFile[] = [];
  let at = manifestEnd;
  for (const line of entries) {
    const m = /^([0-9a-f]{64}) (\d+) (.+)$/.exec(line);
    if (!m || !isBundlePath(m[3])) bad(`malformed manifest line ${JSON.stringify(line.slice(0, 120))}`);
    const [, sum, size, path] = m as RegExpExecArray;
    const end = at + Number(size);
    if (end > buf.byteLength) bad(`${path} runs past the end`);
    const data = buf.subarray(at, end);
    if (sha256Hex(data) !== sum) bad(`${path} does not match its hash`);
    files.push({ path, data });
    at = end;
  }
  if (at !== buf.byteLength) bad('bytes after the last file');
  return files;
}
