import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { OrreryError } from '../../lib/errors.ts';
import { inspectRecord, type InspectRecord } from '../../protocols/messages/inspect.ts';
import { isPlainObject } from '../../protocols/validate.ts';

/**
 * The trace file (docs/inspection.md): JSON Lines. The first line is the header, then one
 * InspectRecord per line in the order the recorder received them:
 *
 *   {"format":"orrery-trace","version":1,"cluster":"default","startedAt":1718000000000}
 *   {"machine":"actor","id":"…","seq":0,"time":…,"event":{"type":"xstate.init"},"from":null,"to":"PENDING","context":{…}}
 */
export const TRACE_FORMAT = 'orrery-trace';
export const TRACE_VERSION = 1;

export interface TraceHeader {
  format: typeof TRACE_FORMAT;
  version: typeof TRACE_VERSION;
  cluster: string;
  /** Unix ms when recording began. */
  startedAt: number;
}

export interface Trace {
  header: TraceHeader;
  records: InspectRecord[];
}

export class TraceFormatError extends OrreryError {
  override name = 'TraceFormatError';
  constructor(message: string, detail: Record<string, unknown> = {}) {
    super('INVALID_TRACE', message, { detail });
  }
}

/** One line of the file for a header or a record. */
export function traceLine(value: TraceHeader | InspectRecord): string {
  return `${JSON.stringify(value)}\n`;
}

/** Parses a whole trace file's text; a bad header or line is a TraceFormatError naming the line. */
export function parseTrace(text: string, source = 'trace'): Trace {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (lines.length === 0) throw new TraceFormatError(`${source}: empty file (expected an ${TRACE_FORMAT} header line)`, { line: 1 });
  const header = parseHeader(lines[0], source);
  const records: InspectRecord[] = [];
  for (let i = 1; i < lines.length; i++) {
    if (lines[i].trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(lines[i]);
    } catch {
      throw new TraceFormatError(`${source}: line ${i + 1} is not JSON`, { line: i + 1 });
    }
    try {
      records.push(inspectRecord(value, '') as InspectRecord);
    } catch (err) {
      throw new TraceFormatError(`${source}: line ${i + 1} is not an inspection record: ${err instanceof Error ? err.message : String(err)}`, { line: i + 1 });
    }
  }
  return { header, records };
}

function parseHeader(line: string, source: string): TraceHeader {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    throw new TraceFormatError(`${source}: line 1 is not JSON (expected an ${TRACE_FORMAT} header)`, { line: 1 });
  }
  if (!isPlainObject(value) || value.format !== TRACE_FORMAT) throw new TraceFormatError(`${source}: not an ${TRACE_FORMAT} file (line 1 has no "format": "${TRACE_FORMAT}")`, { line: 1 });
  if (value.version !== TRACE_VERSION) throw new TraceFormatError(`${source}: trace version ${JSON.stringify(value.version)} is not supported (this orrery reads version ${TRACE_VERSION})`, { line: 1 });
  if (typeof value.cluster !== 'string' || typeof value.startedAt !== 'number') throw new TraceFormatError(`${source}: the header needs "cluster" (a string) and "startedAt" (a number)`, { line: 1 });
  return { format: TRACE_FORMAT, version: TRACE_VERSION, cluster: value.cluster, startedAt: value.startedAt };
}

/** Reads a trace file (the whole file; a missing or unreadable file is a TraceFormatError too). */
export function readTrace(path: string): Trace {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TraceFormatError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { path });
  }
  return parseTrace(text, path);
}

/** Text held before it is written: more than this is written at once rather than at the end of the turn. */
const WRITE_CHUNK_CHARS = 256 * 1024;

/**
 * Appends a header and then records to a file; `close()` resolves once everything is on disk. The
 * lines of one event-loop turn are written together (one write to the stream per turn, or per
 * WRITE_CHUNK_CHARS), in the order they were given.
 */
export class TraceWriter {
  readonly #stream: WriteStream;
  #count = 0;
  #error: Error | undefined;
  readonly #opened: Promise<void>;
  #pending = '';
  #writing: ReturnType<typeof setImmediate> | undefined;

  constructor(readonly path: string, header: TraceHeader) {
    this.#stream = createWriteStream(path, { flags: 'w' });
    this.#opened = new Promise((resolve, reject) => {
      this.#stream.once('open', () => resolve());
      this.#stream.once('error', (err) => {
        this.#error = err;
        reject(err);
      });
    });
    this.#opened.catch(() => undefined);
    this.#stream.write(traceLine(header));
  }

  /** Resolves once the file is open; rejects when it cannot be created. */
  opened(): Promise<void> {
    return this.#opened;
  }

  get count(): number {
    return this.#count;
  }

  write(record: InspectRecord): void {
    if (this.#error) return;
    this.#pending += traceLine(record);
    this.#count++;
    if (this.#pending.length >= WRITE_CHUNK_CHARS) this.#flush();
    else this.#writing ??= setImmediate(() => this.#flush());
  }

  #flush(): void {
    if (this.#writing !== undefined) {
      clearImmediate(this.#writing);
      this.#writing = undefined;
    }
    if (this.#pending === '' || this.#error) return;
    this.#stream.write(this.#pending);
    this.#pending = '';
  }

  close(): Promise<void> {
    this.#flush();
    return new Promise((resolve, reject) => {
      if (this.#error) return reject(this.#error);
      this.#stream.end((err?: Error | null) => (err ? reject(err) : resolve()));
    });
  }
}
