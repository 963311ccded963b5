import { childPath, invalid, isPlainObject, literal, num, object, optional, str, type Infer, type Validator } from '../validate.ts';
import { id } from './common.ts';

/**
 * Inspection (docs/inspection.md): every transition of a Gcs, Node, Raylet, Actor or
 * PlacementGroup machine as plain data, published only while someone watches — one inspect_record
 * per transition on `orrery.<cluster>.inspect.<machine>.<id>`, or, while every watcher takes
 * batches, the records of one event-loop turn as one inspect_records on
 * `orrery.<cluster>.inspect_batch`. Watchers say so on `orrery.<cluster>.inspect_watch`
 * (inspect_watch, every second); each publisher that hears one attaches an inspector and answers on
 * the watch's reply subject (inspect_ack).
 */
export const MACHINE_KINDS = ['gcs', 'node', 'raylet', 'actor', 'placement_group', 'autoscaler'] as const;
export type MachineKind = (typeof MACHINE_KINDS)[number];

/** Largest encoded `context` a publisher sends; bigger contexts are cut (see runtime/inspect/plain.ts). */
export const MAX_CONTEXT_BYTES = 16 * 1024;

const plainRecord = (what: string): Validator<Record<string, unknown>> => (value, path) =>
  isPlainObject(value) ? value : invalid(path, `expected ${what}`);

const inspectEvent: Validator<{ type: string; [k: string]: unknown }> = (value, path) => {
  if (!isPlainObject(value)) return invalid(path, 'expected an object');
  if (typeof value.type !== 'string' || value.type.length === 0 || value.type.length > 256) return invalid(`${path}.type`, 'expected a string of 1 to 256 characters');
  return value as { type: string; [k: string]: unknown };
};

const statePath = str({ min: 1, max: 1024 });

/** One transition of one machine instance (every field checked, path named; unknown fields dropped). */
const checkedRecord = object({
  machine: literal(...MACHINE_KINDS),
  /** actorId, nodeId (node and raylet), pgId, or the cluster name for the gcs. */
  id,
  /** Increases per publishing process. */
  seq: num({ int: true, min: 0 }),
  /** Unix ms when the transition happened. */
  time: num(),
  event: inspectEvent,
  /** The state before, as a dotted path ('onNode.ALIVE'); null for the first snapshot of an instance. */
  from: (value: unknown, path: string) => (value === null || value === undefined ? null : statePath(value, path)),
  to: statePath,
  context: plainRecord('an object'),
});

const RECORD_FIELDS = ['machine', 'id', 'seq', 'time', 'event', 'from', 'to', 'context'] as const;
const MACHINE_SET: ReadonlySet<unknown> = new Set(MACHINE_KINDS);
const within = (value: unknown, min: number, max: number): boolean => typeof value === 'string' && value.length >= min && value.length <= max;

/**
 * The same rules as checkedRecord for a record that has exactly its fields (what publishers send,
 * thousands a second): checked in place and returned as is, with no path strings built and no copy.
 * Anything else — a missing or unknown field, any rule broken — is undefined, and checkedRecord
 * decides (and names the field).
 */
function plainValidRecord(value: unknown): InspectRecord | undefined {
  if (!isPlainObject(value)) return undefined;
  let fields = 0;
  for (const key in value) if (Object.hasOwn(value, key)) fields++;
  if (fields !== RECORD_FIELDS.length) return undefined;
  for (const key of RECORD_FIELDS) if (!Object.hasOwn(value, key)) return undefined;
  const { machine, id: recordId, seq, time, event, from, to, context } = value;
  if (!MACHINE_SET.has(machine) || !within(recordId, 1, 256)) return undefined;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return undefined;
  if (typeof time !== 'number' || !Number.isFinite(time)) return undefined;
  if (!isPlainObject(event) || !within(event.type, 1, 256)) return undefined;
  if (from !== null && !within(from, 1, 1024)) return undefined;
  if (!within(to, 1, 1024) || !isPlainObject(context)) return undefined;
  return value as unknown as InspectRecord;
}

/** One transition of one machine instance. */
export const inspectRecord: Validator<InspectRecord> = (value, path) => plainValidRecord(value) ?? (checkedRecord(value, path) as InspectRecord);

export interface InspectRecord {
  machine: MachineKind;
  id: string;
  seq: number;
  time: number;
  event: { type: string; [k: string]: unknown };
  from: string | null;
  to: string;
  context: Record<string, unknown>;
}

/** Most records in one inspect_records message (a publisher sends at most PUBLISH_BATCH_RECORDS). */
export const MAX_BATCH_RECORDS = 1000;

/**
 * The records one publisher took in one event-loop turn (at most MAX_BATCH_RECORDS), in its `seq`
 * order, on `orrery.<cluster>.inspect_batch` — sent instead of one inspect_record per transition
 * while every watcher of that publisher said it takes batches.
 */
export const inspectRecords = object({
  /** Who published: the same name as its inspect_ack (`gcs:<cluster>`, `raylet:<nodeId>`, …). */
  publisher: str({ min: 1, max: 300 }),
  records: (value: unknown, path: string): InspectRecord[] => {
    if (!Array.isArray(value)) return invalid(path, 'expected an array');
    if (value.length < 1 || value.length > MAX_BATCH_RECORDS) return invalid(path, `expected 1 to ${MAX_BATCH_RECORDS} records`);
    // array(inspectRecord) with the path of an item built only when it needs checking field by field
    const out: InspectRecord[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = plainValidRecord(value[i]) ?? (checkedRecord(value[i], childPath(path, i)) as InspectRecord);
    return out;
  },
});
export type InspectRecords = Infer<typeof inspectRecords>;

/** A watcher's "I am listening" (published every second while it watches). */
export const inspectWatch = object({
  watcher: id,
  /** true: the watcher stops now (publishers drop it at once rather than after the grace period). */
  leaving: optional(literal(true)),
  /**
   * true: the watcher also subscribes `orrery.<cluster>.inspect_batch` and takes inspect_records.
   * A publisher sends batches while every watcher it hears from says so, and one inspect_record per
   * transition on `inspect.<machine>.<id>` otherwise (a watcher of one machine instance leaves it out).
   */
  batches: optional(literal(true)),
});
export type InspectWatch = Infer<typeof inspectWatch>;

/** A publisher's answer to a watch that carried a reply subject: it is attached. */
export const inspectAck = object({
  /** `gcs:<cluster>`, `raylet:<nodeId>`, `local:<pid>`… — who answered. */
  publisher: str({ min: 1, max: 300 }),
  attached: literal(true),
});
export type InspectAck = Infer<typeof inspectAck>;

/** The registry entries of inspection (spread into protocols/messages/registry.ts). */
export const inspectMessages = {
  inspect_record: inspectRecord,
  inspect_records: inspectRecords,
  inspect_watch: inspectWatch,
  inspect_ack: inspectAck,
} as const;
