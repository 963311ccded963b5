import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { InspectionEvent } from 'xstate';
import type { Bus, BusStatus } from '../../../runtime/bus/bus.ts';
import type { NodeContext } from '../../../runtime/gcs/node.machine.ts';
import { Harness } from './support.ts';

// The GCS follows its own bus connection (Bus.onStatus): while it is down every live Node machine
// is UNHEARD (its timeout does not count), and HEARD once it is back. The memory bus never drops, so
// the GCS here runs on one whose status this spec reports by hand; the Node machine's timing is
// node.machine.spec.ts's business — this checks the wiring, on the machines' own snapshots.

/** Dresses a memory bus so that the spec calls its onStatus listeners. */
function statusBus() {
  const listeners = new Set<(s: BusStatus) => void>();
  return {
    listeners,
    tell: (status: BusStatus) => [...listeners].forEach((l) => l(status)),
    wrap: (bus: Bus): Bus => {
      const wrapped: Bus = Object.create(bus);
      wrapped.onStatus = (listener) => {
        listeners.add(listener);
        return () => void listeners.delete(listener);
      };
      return wrapped;
    },
  };
}

test('a lost connection makes every live node UNHEARD, its return HEARD again; stopping the GCS stops the listening', async () => {
  const contexts = new Map<string, NodeContext>();
  const inspect = (e: InspectionEvent): void => {
    const id = (e.actorRef as { id?: string }).id ?? '';
    if (e.type === '@xstate.snapshot' && id.startsWith('node-')) contexts.set(id, (e.snapshot as unknown as { context: NodeContext }).context);
  };
  const status = statusBus();
  const h = await Harness.start({ inspect }, status.wrap);
  try {
    await h.addNode({ nodeId: 'n1', labels: {} });
    await h.addNode({ nodeId: 'n2', labels: {} });
    assert.is(status.listeners.size, 1);
    assert.equal([...contexts.keys()].sort(), ['node-n1', 'node-n2']);
    status.tell('disconnected');
    assert.equal([...contexts.values()].map((c) => c.unheard), [...contexts.keys()].map(() => true));
    assert.ok(h.logs.some((l) => l.includes('lost its connection')));
    status.tell('reconnected');
    assert.equal([...contexts.values()].map((c) => c.unheard), [...contexts.keys()].map(() => false));
  } finally {
    await h.close();
  }
  assert.is(status.listeners.size, 0, 'the GCS stopped listening when it stopped');
});

test.run();
