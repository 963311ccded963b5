/**
 * The GCS process: `node runtime/gcs/main.ts [--address URL] [--cluster NAME] [--rare-resources
 * GPU,my_rare] [--heartbeat-ms N] [--node-timeout-ms N] [--max-dead-actors N]` (flags.ts). It
 * connects to NATS, starts the GCS and prints one line on stdout once every request subject is served:
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
import type { Bus } from '../bus/bus.ts';
import { inspectionEnabled, InspectPublisher } from '../inspect/publisher.ts';
import { processMain, type ProcessMain } from '../process/main.ts';
import { parseGcsFlags, USAGE } from './flags.ts';
import { KvStore } from './kv-store.ts';
import { GcsService } from './service.ts';
import type { GcsStore } from './store.ts';

/** The tables: JetStream KV when asked for (or `auto` and the server has JetStream), else memory. */
async function openStore(persist: 'auto' | 'on' | 'off'): Promise<GcsStore | undefined> {
  if (persist === 'off') return undefined;
  const kv = await bus.keyValue?.();
  if (!kv) {
    if (persist === 'on') throw new Error(`--persist on: the NATS server at ${flags.address} has no JetStream (start it with -js)`);
    main.say('the NATS server has no JetStream: the GCS keeps its tables in memory (a restart loses them)');
    return undefined;
  }
  const opened = await KvStore.open(kv, { cluster: flags.cluster, log: main.say });
  const { nodes, actors } = opened.counts();
  main.say(`tables in JetStream KV: ${nodes} node(s), ${actors} actor(s) stored`);
  return opened;
}

const main: ProcessMain = processMain('gcs');
const flags = main.flags(() => parseGcsFlags(process.argv.slice(2), process.env), USAGE);
const bus: Bus = await main.connect(flags.address, `orrery-gcs-${flags.cluster}`);

let gcs: GcsService;
let store: GcsStore | undefined;
let inspection: InspectPublisher | undefined;
try {
  store = await openStore(flags.persist);
  gcs = new GcsService({
    bus, cluster: flags.cluster, heartbeatMs: flags.heartbeatMs, nodeTimeoutMs: flags.nodeTimeoutMs, rareResources: flags.rareResources,
    maxDeadActors: flags.maxDeadActors, graceMs: flags.graceMs, store, log: main.say,
  });
  if (inspectionEnabled(process.env)) {
    inspection = new InspectPublisher({ bus, cluster: gcs.cluster, name: `gcs:${gcs.cluster}`, log: main.say });
    inspection.add(gcs.actor.system);
    await inspection.start();
  }
  await gcs.start();
} catch (err) {
  await bus.close().catch(() => undefined);
  main.fail(1, `cannot start: ${err instanceof Error ? err.message : String(err)}`);
}

process.stdout.write(`ORRERY_READY ${JSON.stringify({ role: 'gcs', cluster: gcs.cluster })}\n`);

main.onSignals(async () => {
  await gcs.stop();
  await store?.close();
  inspection?.stop();
  await bus.close().catch(() => undefined);
});

await bus.closed;
if (!main.stopping) main.fail(1, `lost the connection to NATS at ${flags.address}`);
