/**
 * The GCS process: `node runtime/gcs/main.ts [--address URL] [--cluster NAME] [--rare-resources
 * GPU,my_rare] [--heartbeat-ms N] [--node-timeout-ms N]` (flags.ts). It connects to NATS, starts
 * the GCS and prints one line on stdout once every request subject is served:
 *
 *   ORRERY_READY {"role":"gcs","cluster":"…"}
 *
 * Its machines' transitions are published on `inspect.*` while someone watches (runtime/inspect,
 * docs/inspection.md); ORRERY_INSPECT=off leaves inspection out entirely.
 *
 * Logs go to stderr. SIGTERM or SIGINT stops it gracefully (exit 0). A bad flag is one line on
 * stderr naming the flag, exit 2; NATS that cannot be reached is one line naming the address,
 * exit 1. Nothing that arrives on the wire ends the process.
 */
import { OrreryError } from '../../lib/errors.ts';
import type { Bus } from '../bus/bus.ts';
import { connectNatsBus } from '../bus/nats.ts';
import { FlagError, parseGcsFlags, USAGE, type GcsFlags } from './flags.ts';
import { inspectionEnabled, InspectPublisher } from '../inspect/publisher.ts';
import { GcsService } from './service.ts';

const say = (line: string): void => void process.stderr.write(`orrery gcs: ${line}\n`);

function fail(code: number, line: string): never {
  say(line);
  process.exit(code);
}

let flags: GcsFlags;
try {
  flags = parseGcsFlags(process.argv.slice(2), process.env);
} catch (err) {
  fail(2, err instanceof FlagError ? err.message : String(err));
}
if (flags.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

let bus: Bus;
try {
  bus = await connectNatsBus({ servers: flags.address, name: `orrery-gcs-${flags.cluster}`, onHandlerError: (err) => say(`handler error: ${String(err)}`) });
} catch (err) {
  fail(1, `cannot connect to NATS at ${flags.address}: ${err instanceof OrreryError ? String(err.detail.reason ?? err.message) : String(err)}`);
}

let gcs: GcsService;
let inspection: InspectPublisher | undefined;
try {
  gcs = new GcsService({ bus, cluster: flags.cluster, heartbeatMs: flags.heartbeatMs, nodeTimeoutMs: flags.nodeTimeoutMs, rareResources: flags.rareResources, log: say });
  if (inspectionEnabled(process.env)) {
    inspection = new InspectPublisher({ bus, cluster: gcs.cluster, name: `gcs:${gcs.cluster}`, log: say });
    inspection.add(gcs.actor.system);
    await inspection.start();
  }
  await gcs.start();
} catch (err) {
  await bus.close().catch(() => undefined);
  fail(1, `cannot start: ${err instanceof Error ? err.message : String(err)}`);
}

process.stdout.write(`ORRERY_READY ${JSON.stringify({ role: 'gcs', cluster: gcs.cluster })}\n`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  say(`${signal}: stopping`);
  await gcs.stop();
  inspection?.stop();
  await bus.close().catch(() => undefined);
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

await bus.closed;
if (!stopping) fail(1, `lost the connection to NATS at ${flags.address}`);
