/**
 * The raw-NATS reference of the end-to-end bench's call latency: a plain responder in a process of
 * its own (as a worker host is), on its own connectNatsBus connection, answering every request on
 * one subject with the request's bytes — no codec, no mailbox, no actor. This one runs from source
 * under tsx (bench:e2e --dev); the default mode runs bench/fixtures/e2e-responder.mjs, the same on the
 * compiled bus, on plain node.
 *
 *   node --conditions=source --import tsx bench/support/e2e-responder.ts <nats-url> <subject>
 *
 * Prints `READY` on stdout once its subscription is registered with the server; exits on SIGTERM,
 * or when its parent goes away (stdin closes).
 */
import { connectNatsBus } from '../../runtime/bus/nats-connect.ts';

const [url, subject] = process.argv.slice(2);
if (!url || !subject) {
  process.stderr.write('usage: e2e-responder.ts <nats-url> <subject>\n');
  process.exit(2);
}
const bus = await connectNatsBus({ servers: url, name: 'orrery-bench-responder' });
bus.subscribe(subject, (msg) => msg.respond(msg.data));
await bus.flush();
process.stdout.write('READY\n');

const quit = (): void => {
  void bus.close().finally(() => process.exit(0));
};
process.on('SIGTERM', quit);
process.on('SIGINT', quit);
process.stdin.on('end', quit);
process.stdin.resume();
