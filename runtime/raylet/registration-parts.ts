import type { RegisterNode } from '../../protocols/messages/node.ts';

/** What a raylet runs, as its registration lists it. */
export type RunningList = { readonly actors: NonNullable<RegisterNode['running']>['actors']; readonly bundles: NonNullable<NonNullable<RegisterNode['running']>['bundles']> };

/**
 * The budget of one part of a registration, in encoded bytes: half the bus's default max_payload
 * (1 MiB), so the register_node that carries the last part, with the node's labels, taints and
 * resources, fits too.
 */
export const RUNNING_PART_BYTES = 512 * 1024;

/**
 * Most bytes one listed item takes in msgpack: a map of two or three short keys and values
 * (`actorId`/`incarnation`/`starting`, `pgId`/`index`/`committed`, 26 to 39 bytes) around its id. An
 * upper bound, so parts never pass the budget.
 */
const itemBytes = (id: string): number => 44 + Buffer.byteLength(id, 'utf8');

/**
 * What a raylet runs cut into parts of at most `maxBytes` each (runtime/gcs/running-parts.ts), in
 * order: actors first, then bundles. One part — the whole list — when it fits; never an empty list
 * of parts.
 */
export function runningParts(running: RunningList, maxBytes = RUNNING_PART_BYTES): RunningList[] {
  const parts: { actors: RunningList['actors'][number][]; bundles: RunningList['bundles'][number][] }[] = [];
  let part = { actors: [] as RunningList['actors'][number][], bundles: [] as RunningList['bundles'][number][] };
  let bytes = 0;
  const room = (size: number): void => {
    if (bytes + size > maxBytes && bytes > 0) {
      parts.push(part);
      part = { actors: [], bundles: [] };
      bytes = 0;
    }
    bytes += size;
  };
  for (const a of running.actors) {
    room(itemBytes(a.actorId));
    part.actors.push(a);
  }
  for (const b of running.bundles) {
    room(itemBytes(b.pgId));
    part.bundles.push(b);
  }
  parts.push(part);
  return parts;
}
