// The NATS connection's ups and downs as NatsBus (nats.ts) needs them: its status stream read
// (drops, reconnects, refused publishes), the onStatus() listeners told, and a close that a drop
// cannot hang.
import { errors, type NatsConnection, type PermissionViolationError } from '@nats-io/transport-node';
import { rethrowLater, type BusStatus } from './bus.ts';

/** What the status stream has to tell the bus. */
export interface StatusReactions {
  /** The connection dropped (`down`), or came back; not while it closes. */
  changed(down: boolean): void;
  /** The server refused a publish (a permissions violation). */
  refused(err: PermissionViolationError): void;
}

/**
 * The connection's status stream, read from the start until the connection closes:
 * - a dropped connection, and its coming back, are told to `on.changed` (NatsBus fails every
 *   waiting request at the drop, then tells its onStatus listeners; see its class comment);
 * - a drop while close() drains closes the connection;
 * - a server that refuses a publish (a permissions violation) says so only here: `on.refused`.
 */
export async function watchStatus(nc: NatsConnection, on: StatusReactions): Promise<void> {
  for await (const status of nc.status()) {
    if (status.type === 'disconnect' || status.type === 'reconnect') {
      if (nc.isClosed()) continue;
      if (nc.isDraining()) {
        // close() was draining and the connection dropped: its last flush would wait for a
        // server that may never come back, and nats.js would go on reconnecting meanwhile
        if (status.type === 'disconnect') void nc.close();
        continue;
      }
      on.changed(status.type === 'disconnect');
      continue;
    }
    const err = status.type === 'error' ? status.error : undefined;
    if (err instanceof errors.PermissionViolationError && err.operation === 'publish') on.refused(err);
  }
}

/**
 * The listeners of a bus's onStatus(), told in the order they were added; one that throws keeps none
 * of the others from hearing.
 */
export class StatusListeners {
  private readonly listeners = new Set<(status: BusStatus) => void>();

  add(listener: (status: BusStatus) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  tell(status: BusStatus): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(status);
      } catch (err) {
        rethrowLater(err); // a listener's bug: the others still hear
      }
    }
  }
}

/**
 * Drains (what was published goes out, handlers get what was routed to them), then closes; settles
 * once the bus's `closed` has. While the connection is down there is nothing to drain into, and the
 * server may never come back: it closes at once, and a drop during the drain closes it too
 * (watchStatus). Either way nats.js stops reconnecting, and waiting requests fail with
 * BusClosedError (NatsBus's `closed`).
 */
export async function closeConnection(nc: NatsConnection, bus: { readonly down: boolean; readonly closed: Promise<void> }): Promise<void> {
  if (!nc.isClosed() && !nc.isDraining()) {
    if (bus.down) await nc.close();
    else {
      // a drop during the drain closes the connection (watchStatus), and a flush nats.js issued
      // while it was down is never answered: the drain may then never settle, so `closed` ends it
      const draining = nc.drain();
      draining.catch(() => undefined);
      try {
        await Promise.race([draining, bus.closed]);
      } catch {
        // a drain that failed (the connection dropped under it) still ends in a closed connection
        if (!nc.isClosed()) await nc.close();
      }
    }
  }
  await bus.closed;
}
