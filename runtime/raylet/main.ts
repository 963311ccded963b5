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
 * stderr naming the flag, exit 2; NATS that cannot be reached (after --connect-wait, if given), or
 * a GCS that refuses the node, is one line, exit 1.
 */
import { OrreryError } from '../../lib/errors.ts';
import type { Bus } from '../bus/bus.ts';
import { inspectionEnabled, InspectPublisher } from '../inspect/publisher.ts';
import { processMain, type ProcessMain } from '../process/main.ts';
import { rayletConfig } from './config.ts';
import { parseRayletFlags, USAGE } from './flags.ts';
import { RayletService } from './service.ts';

const main: ProcessMain = processMain('raylet');
const flags = main.flags(() => parseRayletFlags(process.argv.slice(2), process.env), USAGE);
const bus: Bus = await main.connect(flags.address, `orrery-raylet-${flags.nodeName ?? process.pid}`, flags.access, flags.connectWaitSeconds);

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
    codeRoots: flags.codeRoots,
  });
  if (inspectionEnabled(process.env)) {
    inspection = new InspectPublisher({ bus, cluster: config.cluster, name: `raylet:${config.nodeId}`, log: main.say });
    await inspection.start();
  }
  raylet = new RayletService({
    bus,
    config,
    hosts: { mode: 'process', natsAddress: flags.address, natsAccess: flags.access },
    maxQueuedTasks: flags.maxQueuedTasks,
    maxQueuedTaskBytes: flags.maxQueuedTaskBytes,
    log: main.say,
    onActorSystem: (system) => void inspection?.add(system),
  });
  await raylet.start();
} catch (err) {
  await bus.close().catch(() => undefined);
  main.fail(err instanceof OrreryError && /^INVALID_/.test(err.code) ? 2 : 1, `cannot start: ${err instanceof Error ? err.message : String(err)}`);
}

process.stdout.write(`ORRERY_READY ${JSON.stringify({ role: 'raylet', nodeId: raylet.nodeId, nodeName: config.nodeName })}\n`);

main.onSignals(async () => {
  await raylet.stop();
  inspection?.stop();
  await bus.close().catch(() => undefined);
});

const { error } = await raylet.closed;
if (error && !main.stopping) {
  await bus.close().catch(() => undefined);
  main.fail(1, `stopped: the GCS refused the node (${error.code}): ${error.message}`);
}
