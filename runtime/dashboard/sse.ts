import type { IncomingMessage, ServerResponse } from 'node:http';

/** Comment lines this often keep proxies and the browser from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

export interface EventStreamWriter {
  /** One Server-Sent Event: `event: <name>`, optional `id:`, one `data:` line of JSON. */
  send(name: string, data: unknown, id?: number | string): void;
  /** Called once when the browser goes away or the server closes the stream. */
  onClose(fn: () => void): void;
  close(): void;
}

/** Opens a `text/event-stream` response. Every open stream is tracked so the server can end them on close(). */
export function openEventStream(req: IncomingMessage, res: ServerResponse, open: Set<EventStreamWriter>): EventStreamWriter {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  res.write(': orrery dashboard\n\n');
  const closers: (() => void)[] = [];
  let closed = false;
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  const finish = (): void => {
    if (closed) return;
    closed = true;
    clearInterval(keepalive);
    open.delete(writer);
    for (const fn of closers.splice(0)) fn();
    res.end();
  };
  const writer: EventStreamWriter = {
    send(name, data, id) {
      if (closed) return;
      res.write(`event: ${name}\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(data)}\n\n`);
    },
    onClose(fn) {
      if (closed) fn();
      else closers.push(fn);
    },
    close: finish,
  };
  open.add(writer);
  req.on('close', finish);
  return writer;
}
