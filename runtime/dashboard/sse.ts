import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';

/** Comment lines this often keep proxies and the browser from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

export interface EventStreamWriter {
  /** One Server-Sent Event: `event: <name>`, one `data:` line of JSON, optional `id:`. */
  send(name: string, data: unknown, id?: number | string): void;
  /** Called once when the browser goes away or the server closes the stream. */
  onClose(fn: () => void): void;
  close(): void;
}

/**
 * A `text/event-stream` answer (Hono's streamSSE) that `start` writes to; it stays open until the
 * browser goes away or close() is called. Every open stream is in `open`, so that the server can
 * end them when it stops. Never cached, and not buffered by a proxy (X-Accel-Buffering).
 */
export function eventStream(c: Context, open: Set<EventStreamWriter>, start: (stream: EventStreamWriter) => void): Response {
  const res = streamSSE(
    c,
    (sse) =>
      new Promise<void>((resolve) => {
        const closers: (() => void)[] = [];
        let closed = false;
        const keepalive = setInterval(() => void sse.write(': keepalive\n\n'), KEEPALIVE_MS);
        const finish = (): void => {
          if (closed) return;
          closed = true;
          clearInterval(keepalive);
          open.delete(writer);
          for (const fn of closers.splice(0)) fn();
          resolve();
        };
        const writer: EventStreamWriter = {
          send(name, data, id) {
            if (!closed) void sse.writeSSE({ event: name, data: JSON.stringify(data), ...(id === undefined ? {} : { id: String(id) }) });
          },
          onClose(fn) {
            if (closed) fn();
            else closers.push(fn);
          },
          close: finish,
        };
        open.add(writer);
        sse.onAbort(finish);
        void sse.write(': orrery dashboard\n\n');
        try {
          start(writer);
        } catch {
          finish();
        }
      }),
  );
  res.headers.set('cache-control', 'no-store');
  res.headers.set('x-accel-buffering', 'no');
  return res;
}
