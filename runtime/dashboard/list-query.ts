import type { Context } from 'hono';
import { ACTOR_STATES as WIRE_ACTOR_STATES } from '../../protocols/messages/actor.ts';
import type { ActorState } from '../client/cluster-info.types.ts';
import { HttpError } from './http.ts';

/**
 * `?limit=N&after=ID` on the dashboard's lists (GET /api/nodes, /api/actors, /api/placement-groups),
 * with the GCS's paging contract (protocols/messages/page.ts): items in ascending id order, the
 * cursor the last id of the previous page. With neither parameter a list answers the whole array,
 * as it always did (the client walks the GCS's pages for it); with either it answers one page,
 * `{ items, next? }`. `?state=ALIVE,PENDING` filters /api/actors (in the GCS).
 */
export const MAX_LIMIT = 10_000;

/** A query parameter's first value, decoded (Hono's `c.req.query`), or undefined when absent. */
export type Query = (name: string) => string | undefined;

export const queryOf =
  (c: Context): Query =>
  (name) =>
    c.req.query(name);
const ACTOR_STATES: readonly ActorState[] = WIRE_ACTOR_STATES;

export function pagedList<T>(list: readonly T[], key: (item: T) => string, query: Query): T[] | { items: T[]; next?: string } {
  const limitText = query('limit');
  const after = query('after');
  if (limitText === undefined && after === undefined) return [...list];
  let limit = 1000;
  if (limitText !== undefined) {
    limit = Number(limitText);
    if (limitText.trim() === '' || !Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      throw new HttpError(400, 'BAD_QUERY', `limit: expected a whole number from 1 to ${MAX_LIMIT}, got ${JSON.stringify(limitText)}`);
    }
  }
  const sorted = list.filter((item) => after === undefined || key(item) > after).sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const items = sorted.slice(0, limit);
  return sorted.length > limit ? { items, next: key(items.at(-1)!) } : { items };
}

/** `?state=ALIVE,pending` → actor states; an unknown one is 400 BAD_QUERY. */
export function actorStates(query: Query): { states?: ActorState[] } {
  const text = query('state');
  if (text === undefined) return {};
  const states = text.split(',').map((s) => s.trim().toUpperCase() as ActorState);
  const unknown = states.find((s) => !ACTOR_STATES.includes(s));
  if (unknown !== undefined) throw new HttpError(400, 'BAD_QUERY', `state: unknown actor state ${JSON.stringify(unknown)} (expected ${ACTOR_STATES.join(', ')})`);
  return { states: [...new Set(states)] };
}
