import { ROOT, assertToken } from './subjects.ts';

/**
 * The presence and batch subjects of inspection, beside protocols/subjects.ts's
 * `inspect.<machine>.<id>`:
 *
 *   orrery.<cluster>.inspect_watch              watchers announce themselves (inspect_watch), publishers listen
 *   orrery.<cluster>.inspect_watch.<watcher>    where publishers acknowledge one watcher (inspect_ack)
 *   orrery.<cluster>.inspect_batch              batches of records (inspect_records), while every watcher takes them
 *
 * `inspect_watch` and `inspect_batch` are tokens of their own, so none of these subjects matches
 * `orrery.<cluster>.inspect.>`: a recorder of every inspection subject never records the watch
 * traffic, a publisher listening for watchers (an exact subject, no wildcard) never hears
 * acknowledgements, and a subscriber of one machine's subjects that did not ask for batches never
 * gets one.
 */
export function watchSubject(cluster: string): string {
  return `${ROOT}.${assertToken('cluster', cluster)}.inspect_watch`;
}

export function ackSubject(cluster: string, watcher: string): string {
  return `${watchSubject(cluster)}.${assertToken('watcher', watcher)}`;
}

export function batchSubject(cluster: string): string {
  return `${ROOT}.${assertToken('cluster', cluster)}.inspect_batch`;
}
