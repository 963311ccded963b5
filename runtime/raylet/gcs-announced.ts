import type { Actor } from 'xstate';
import { OrreryError } from '../../lib/errors.ts';
import { decode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import type { BusMsg } from '../bus/bus.ts';
import type { MalformedCounter } from '../worker/malformed.ts';
import type { RayletMachine } from './raylet.machine.ts';

const eventOnly = { event: messages.event } as const;

/**
 * A GCS opened its subjects (the gcs_leader event): the Raylet machine beats at once, so a standby
 * that takes over or a restarted GCS hears from this node within a round trip (raylet.machine.ts,
 * GCS_ANNOUNCED). At most once per heartbeat period, whatever publishes such events; a malformed
 * one is counted and changes nothing.
 */
export class GcsAnnouncements {
  /** When a gcs_leader event last made the machine beat at once (performance.now()). */
  private lastAnnounced = -Infinity;

  constructor(private readonly malformed: MalformedCounter) {}

  /** One gcs_leader event, heard while `machine` runs the raylet. */
  heard(msg: BusMsg, machine: Actor<RayletMachine> | undefined): void {
    try {
      const { body } = decode(msg.data, { registry: eventOnly });
      if (body.type !== 'gcs_leader') throw new OrreryError('INVALID_MESSAGE', `type: expected gcs_leader on ${msg.subject}, got ${body.type}`);
    } catch (err) {
      this.malformed.count(err);
      return;
    }
    const now = performance.now();
    const period = machine?.getSnapshot().context.heartbeatMs ?? 0;
    if (now - this.lastAnnounced < period) return;
    this.lastAnnounced = now;
    machine?.send({ type: 'GCS_ANNOUNCED' });
  }
}
