/**
 * The raylet process: `node runtime/raylet/main.ts --address nats://… [node flags]` (flags.ts).
 * It connects to NATS, starts a raylet whose worker hosts are forked processes, and prints one line
 * on stdout once the node is registered:
 *
 *   ORRERY_READY {"role":"raylet","nodeId":"…","nodeName":"…"}
 *
 * Its Raylet machine's transitions are published on `inspect.raylet.<nodeId>` while someone watches
 * (runtime/inspect, docs/inspection.md); ORRERY_INSPECT=off leaves inspection out entirely.
 *
 * Logs go to stderr. SIGTERM or SIGINT stops it gracefully (exit 0). A bad flag is one line on
 * stderr naming the flag, exit 2; NATS that cannot be reached, or a GCS that refuses the node, is
 * one line, exit 1.
 */
import { OrreryError } from '../../lib/errors.ts';
import { connectNatsBus } from '../bus/nats.ts';
import type { Bus } from '../bus/bus.ts';
import { FlagError, parseRayletFlags, USAGE, type RayletFlags } from './flags.ts';
import { inspectionEnabled, InspectPublisher } from '../inspect/publisher.ts';
import { rayletConfig } from './config.ts';
import { RayletService } from './service.ts';

const say = (line: string): void => void process.stderr.write(`orrery raylet: ${line}\n`);

function fail(code: number, line: string): never {
  say(line);
  process.exit(code);
}

let flags: RayletFlags;
try {
  flags = parseRayletFlags(process.argv.slice(2), process.env);
} catch (err) {
  fail(2, err instanceof FlagError ? err.message : String(err));
}
if (flags.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

let bus: Bus;
try {
  bus = await connectNatsBus({ servers: flags.address, name: `orrery-raylet-${flags.nodeName ?? process.pid}`, onHandlerError: (err) => say(`handler error: ${String(err)}`) });
} catch (err) {
  fail(1, `cannot connect to NATS at ${flags.address}: ${err instanceof OrreryError ? String(err.detail.reason ?? err.message) : String(err)}`);
}

// The raylet service is built here rather than with startRaylet so its machine's actor system can be
// handed to the inspection publisher (startRaylet does not pass onActorSystem through).
let raylet: RayletService;
let inspection: InspectPublisher | undefined;
let config: ReturnType<typeof rayletConfig>;
try {
  config = rayletConfig({
    cluster: flags.cluster,
    nodeName: flags.nodeName,
    nodeIp: flags.nodeIp,
    labels: flags.labels,
    taints: flags.taints,
    resources: flags.resources,
  });
  if (inspectionEnabled(process.env)) {
    inspection = new InspectPublisher({ bus, cluster: config.cluster, name: `raylet:${config.nodeId}`, log: say });
    await inspection.start();
  }
  raylet = new RayletService({
    bus,
    config,
    hosts: { mode: 'process', natsAddress: flags.address },
    log: say,
    onActorSystem: (system) => void inspection?.add(system),
  });
  await raylet.start();
} catch (err) {
  await bus.close().catch(() => undefined);
  fail(err instanceof OrreryError && /^INVALID_/.test(err.code) ? 2 : 1, `cannot start: ${err instanceof Error ? err.message : String(err)}`);
}

process.stdout.write(`ORRERY_READY ${JSON.stringify({ role: 'raylet', nodeId: raylet.nodeId, nodeName: config.nodeName })}\n`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  say(`${signal}: stopping`);
  await raylet.stop();
  inspection?.stop();
  await bus.close().catch(() => undefined);
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

const { error } = await raylet.closed;
if (error && !stopping) {
  await bus.close().catch(() => undefined);
  fail(1, `stopped: the GCS refused the node (${error.code}): ${error.message}`);
}
