import type { InspectRecord, MachineKind } from '../../protocols/messages/inspect.ts';

/** Which records a replay shows: one machine type, and/or ids starting with `id`. */
export interface ReplayFilter {
  machine?: MachineKind;
  id?: string;
}

export function filterRecords(records: readonly InspectRecord[], filter: ReplayFilter): InspectRecord[] {
  return records.filter((r) => (filter.machine === undefined || r.machine === filter.machine) && (filter.id === undefined || r.id.startsWith(filter.id)));
}

/** `xstate.done.actor.0.raylet.running.beating` → `done(running.beating)`; `xstate.after.heartbeat.…` → `after(heartbeat)`. */
export function eventName(type: string): string {
  const after = /^xstate\.after\.([^.]+)\./.exec(type);
  if (after) return `after(${after[1]})`;
  const actor = /^xstate\.(done|error)\.actor\.(?:\d+\.[^.]+\.)?(.+)$/.exec(type);
  if (actor) return `${actor[1]}(${actor[2]})`;
  return type;
}

/**
 * A raylet's beat: the timer that sends a heartbeat and the answer that ends it. They are most of a
 * raylet's transitions (two a second), so the dashboard folds them away by default.
 */
export function isHeartbeat(record: Pick<InspectRecord, 'machine' | 'event'>): boolean {
  return record.machine === 'raylet' && /^(after\(heartbeat\)|(done|error)\(running\.beating\))$/.test(eventName(record.event.type));
}

/** A record as the dashboard's page takes it: with its readable event name and whether it is a heartbeat. */
export function forPage<R extends Pick<InspectRecord, 'machine' | 'event'>>(record: R): R & { eventName: string; heartbeat: boolean } {
  return { ...record, eventName: eventName(record.event.type), heartbeat: isHeartbeat(record) };
}

/** What a line shows beside the states: where an actor is, why it waits or died. */
function detail(record: InspectRecord): string {
  const c = record.context;
  const parts: string[] = [];
  if (record.machine === 'actor') {
    parts.push(`node=${typeof c.nodeId === 'string' ? c.nodeId : '-'}`);
    if (typeof c.numRestarts === 'number' && c.numRestarts > 0) parts.push(`restarts=${c.numRestarts}`);
    if (typeof c.deathCause === 'string') parts.push(`cause=${JSON.stringify(c.deathCause)}`);
    if (typeof c.pendingReason === 'string') parts.push(`reason=${JSON.stringify(c.pendingReason.length > 80 ? `${c.pendingReason.slice(0, 80)}…` : c.pendingReason)}`);
  }
  if (record.machine === 'placement_group' && typeof c.round === 'number') parts.push(`round=${c.round}`);
  // The event's own scalar fields (FAILED's cause names the node that died, PLACED the node chosen).
  const fields = Object.entries(record.event).filter(([k, v]) => k !== 'type' && (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean'));
  if (fields.length > 0) parts.push(`(${fields.map(([k, v]) => `${k}=${typeof v === 'string' ? JSON.stringify(v.length > 60 ? `${v.slice(0, 60)}…` : v) : v}`).join(' ')})`);
  return parts.join(' ');
}

function offset(ms: number): string {
  const sign = ms < 0 ? '-' : '+';
  return `${sign}${(Math.abs(ms) / 1000).toFixed(3)}s`;
}

/** One line per transition: time since `t0`, machine, id, event, from → to, and a detail. */
export function formatRecord(record: InspectRecord, t0: number): string {
  const from = record.from ?? '(start)';
  const line = `${offset(record.time - t0).padStart(9)}  ${record.machine.padEnd(15)} ${record.id.padEnd(16)}  ${eventName(record.event.type).padEnd(22)} ${from} → ${record.to}`;
  const more = detail(record);
  return more ? `${line}  ${more}` : line;
}

/** The context as one line of JSON, cut to `max` characters. */
export function formatContext(record: InspectRecord, max = 240): string {
  const text = JSON.stringify(record.context);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
