import { ROOT, assertToken } from '../../protocols/subjects.ts';

/**
 * The presence subjects of inspection, beside protocols/subjects.ts's `inspect.<machine>.<id>`:
 *
 *   orrery.<cluster>.inspect_watch              watchers announce themselves (inspect_watch), publishers listen
 *   orrery.<cluster>.inspect_watch.<watcher>    where publishers acknowledge one watcher (inspect_ack)
 *
 * `inspect_watch` is a token of its own, so neither subject matches `orrery.<cluster>.inspect.>`: a
 * recorder of every inspection subject never records the watch traffic, and a publisher listening
 * for watchers (an exact subject, no wildcard) never hears acknowledgements.
 */
export function watchSubject(cluster: string): string {
  return `${ROOT}.${assertToken('cluster', cluster)}.inspect_watch`;
}

export function ackSubject(cluster: string, watcher: string): string {
  return `${watchSubject(cluster)}.${assertToken('watcher', watcher)}`;
}
