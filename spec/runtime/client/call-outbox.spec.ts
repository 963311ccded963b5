import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeCallBatch } from '../../../protocols/call-batch.ts';
import type { BatchCodec, BatchRequest, Bus, RequestCallback } from '../../../runtime/bus/bus.ts';
import { CallOutbox } from '../../../runtime/client/call-outbox.ts';

/** What left the outbox, in order: a lone request (its first byte) or a batch (its requests' first bytes). */
type Sent = { alone: number } | { batch: number[]; frame: Uint8Array };

/** A bus that records what it is asked to send and answers nothing. */
function recordingBus(withBatch = true): { bus: Bus; sent: Sent[] } {
  const sent: Sent[] = [];
  const bus = {
    requestCallback: (_subject: string, data: Uint8Array) => void sent.push({ alone: data[0]! }),
    ...(withBatch
      ? {
          requestBatch: (_subject: string, requests: readonly BatchRequest[], codec: BatchCodec) =>
            void sent.push({ batch: requests.map((r) => r.data[0]!), frame: codec.frame(requests.map((_, i) => i.toString(36)), requests.map((r) => r.data)) }),
        }
      : {}),
  } as unknown as Bus;
  return { bus, sent };
}

const call = (n: number, size = 8): Uint8Array => new Uint8Array(size).fill(n % 256);
const none: RequestCallback = () => undefined;
/** Resolves after the turn's process.nextTick callbacks: when the outbox has sent what the turn made. */
const turnEnd = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('a lone call of a turn leaves as itself at the turn’s end; the calls of a turn leave as one batch, in order', async () => {
  const { bus, sent } = recordingBus();
  const outbox = new CallOutbox(bus);
  outbox.send('s', call(1), 1000, none);
  assert.equal(sent, [], 'held until the turn ends');
  await turnEnd();
  assert.equal(sent, [{ alone: 1 }]);
  for (const n of [2, 3, 4]) outbox.send('s', call(n), 1000, none);
  await turnEnd();
  assert.equal(sent.length, 2);
  const batch = sent[1] as { batch: number[]; frame: Uint8Array };
  assert.equal(batch.batch, [2, 3, 4]);
  assert.equal(decodeCallBatch(batch.frame).calls.map((c) => c[0]), [2, 3, 4]);
});

test('a turn of 300 calls leaves as batches of at most 256, in order', async () => {
  const { bus, sent } = recordingBus();
  const outbox = new CallOutbox(bus);
  for (let n = 0; n < 300; n++) outbox.send('s', call(n), 1000, none);
  await turnEnd();
  const sizes = sent.map((s) => ('batch' in s ? s.batch.length : 1));
  assert.equal(sizes, [256, 44]);
  assert.equal(sent.flatMap((s) => ('batch' in s ? s.batch : [s.alone])), Array.from({ length: 300 }, (_, n) => n % 256));
});

test('a batch leaves once its calls reach 64 KiB; a call over 16 KiB goes alone, after the calls that wait', async () => {
  const { bus, sent } = recordingBus();
  const outbox = new CallOutbox(bus);
  for (let n = 1; n <= 5; n++) outbox.send('s', call(n, 15 * 1024), 1000, none); // the fifth crosses 64 KiB
  outbox.send('s', call(6), 1000, none);
  outbox.send('s', call(7, 20 * 1024), 1000, none);
  outbox.send('s', call(8), 1000, none);
  await turnEnd();
  assert.equal(
    sent.map((s) => ('batch' in s ? s.batch : s.alone)),
    [[1, 2, 3, 4, 5], 6, 7, 8],
  );
});

test('on a bus without requestBatch every call leaves at once, alone', () => {
  const { bus, sent } = recordingBus(false);
  const outbox = new CallOutbox(bus);
  for (const n of [1, 2, 3]) outbox.send('s', call(n), 1000, none);
  assert.equal(sent, [{ alone: 1 }, { alone: 2 }, { alone: 3 }]);
});

test.run();
