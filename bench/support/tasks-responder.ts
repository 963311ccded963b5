/**
 * The raw-NATS references of the task bench, in a process of their own (as a raylet is), on a
 * plain connectNatsBus connection, with no codec, no scheduling and no task. This one runs from
 * source under tsx (bench:tasks --dev); the default mode runs bench/fixtures/tasks-responder.mjs,
 * the same on the compiled bus, on plain node.
 *
 *   plain  answers every request on `<subject>.plain` with the request's bytes:
 *          driver → nats-server → this process → nats-server → driver
 *   hops   the same hops as a task: takes requests on `<subject>.hops`, hands each over IPC to a
 *          forked child (as a raylet hands a task to its worker host), which answers the driver on
 *          the request's reply subject over its own NATS connection:
 *          driver → nats-server → this process → IPC → child → nats-server → driver
 *
 *   node --conditions=source --import tsx bench/support/tasks-responder.ts <nats-url> <subject>
 *
 * Prints `READY` on stdout once both subscriptions are registered and the child is connected;
 * exits on SIGTERM, or when its parent goes away (stdin closes).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';

const [url, subject, role] = process.argv.slice(2);
if (!url || !subject) {
  process.stderr.write('usage: tasks-responder.ts <nats-url> <subject>\n');
  process.exit(2);
}

if (role === 'child') {
  // the worker-host stand-in: answers what the parent hands it on the driver's reply subject
  const bus = await connectNatsBus({ servers: url, name: 'orrery-bench-hops-child' });
  process.on('message', (m: { reply: string; data: Uint8Array }) => bus.publish(m.reply, m.data));
  process.on('disconnect', () => process.exit(0));
  process.send!('ready');
} else {
  const bus = await connectNatsBus({ servers: url, name: 'orrery-bench-responder' });
  const child = fork(fileURLToPath(import.meta.url), [url, subject, 'child'], {
    execArgv: process.execArgv,
    serialization: 'advanced',
    stdio: ['ignore', 2, 2, 'ipc'],
  });
  await new Promise<void>((resolve) => child.once('message', () => resolve()));
  bus.subscribe(`${subject}.plain`, (msg) => msg.respond(msg.data));
  bus.subscribe(`${subject}.hops`, (msg) => {
    if (msg.reply) child.send({ reply: msg.reply, data: msg.data });
  });
  await bus.flush();
  process.stdout.write('READY\n');
  const quit = (): void => {
    child.kill('SIGTERM');
    void bus.close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', quit);
  process.on('SIGINT', quit);
  process.stdin.on('end', quit);
  process.stdin.resume();
}
