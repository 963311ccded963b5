/**
 * The GCS process: `node runtime/gcs/main.ts [--address URL] [--cluster NAME] [--rare-resources
 * GPU,my_rare] [--heartbeat-ms N] [--node-timeout-ms N] [--max-dead-actors N] [--max-dead-nodes N] [--max-removed-groups N] [--persist
 * auto|on|off] [--grace-ms N] [--lease-ms N] [--job-timeout-ms N]` (flags.ts).
 *
 * With persistence (the server has JetStream, or --persist on) its tables live in JetStream KV
 * (kv-store.ts) and GCS processes of one cluster share a leader lease (leader.ts): the holder
 * serves, every other process is a hot standby that takes over — recovering the tables and what
 * the raylets still run (recovery.ts) — once the holder stops renewing. A leader that loses the
 * lease steps down at once (it can no longer send or answer anything: fenced-bus.ts) and waits as
 * a standby again. Without persistence it serves alone, its tables in memory.
 *
 * It prints one line on stdout once it serves, or once it knows it is a standby:
 *
 *   ORRERY_READY {"role":"gcs","cluster":"…","epoch":N}   or   {…,"standby":true}
 *
 * Its machines' transitions are published on `inspect.*` while someone watches (runtime/inspect,
 * docs/inspection.md); ORRERY_INSPECT=off leaves inspection out entirely.
 *
 * Logs go to stderr. SIGTERM or SIGINT stops it gracefully (exit 0). A bad flag is one line on
 * stderr naming the flag, exit 2; NATS that cannot be reached is one line naming the address,
 * exit 1. Nothing that arrives on the wire ends the process.
 */
import { hostname } from 'node:os';
import type { Bus } from '../bus/bus.ts';
import type { ObjectBucket } from '../bus/objects.ts';
import { codeBucketName } from '../../protocols/code-store.ts';
import { bucketName, type KeyValue } from '../bus/kv.ts';
import { inspectionEnabled, InspectPublisher } from '../inspect/publisher.ts';
import { processMain, type ProcessMain } from '../process/main.ts';
import { fencedBus } from './fenced-bus.ts';
import { parseGcsFlags, USAGE } from './flags.ts';
import { CodeStoreSweeper } from './code-sweep.ts';
import { KvStore } from './kv-store.ts';
import { LeaderLease } from './leader.ts';
import { GcsService } from './service.ts';
import type { GcsStore } from './store.ts';

const main: ProcessMain = processMain('gcs');
const flags = main.flags(() => parseGcsFlags(process.argv.slice(2), process.env), USAGE);
const bus: Bus = await main.connect(flags.address, `orrery-gcs-${flags.cluster}`, flags.access, flags.connectWaitSeconds);

interface Serving {
  gcs: GcsService;
  sweeper?: CodeStoreSweeper;
  store?: GcsStore;
  lease?: LeaderLease;
  inspection?: InspectPublisher;
}
let current: Serving | undefined;
let readySaid = false;

function ready(extra: Record<string, unknown>): void {
  if (readySaid) return;
  readySaid = true;
  process.stdout.write(`ORRERY_READY ${JSON.stringify({ role: 'gcs', cluster: flags.cluster, ...extra })}\n`);
}

/** Starts a GCS on `gcsBus` with `store`; resolves once it serves. */
async function serve(gcsBus: Bus, store: GcsStore | undefined, lease?: LeaderLease): Promise<Serving> {
  const gcs = new GcsService({
    ...(lease ? { epoch: lease.epoch, onStaleEpoch: () => lease.giveUp('a raylet has heard from a newer leader') } : {}),
    bus: gcsBus, cluster: flags.cluster, heartbeatMs: flags.heartbeatMs, nodeTimeoutMs: flags.nodeTimeoutMs, rareResources: flags.rareResources,
    maxDeadActors: flags.maxDeadActors, maxDeadNodes: flags.maxDeadNodes, maxRemovedGroups: flags.maxRemovedGroups, graceMs: flags.graceMs, jobTimeoutMs: flags.jobTimeoutMs, createTimeoutMs: flags.createTimeoutMs, store, log: main.say,
  });
  let inspection: InspectPublisher | undefined;
  if (inspectionEnabled(process.env)) {
    inspection = new InspectPublisher({ bus: gcsBus, cluster: gcs.cluster, name: `gcs:${gcs.cluster}`, log: main.say });
    inspection.add(gcs.actor.system);
    await inspection.start();
  }
  await gcs.start();
  // the code store's unnamed chunks (code-sweep.ts): on the raw bus, which has the object store; under the lease
  const objects = bus.objectBucket?.bind(bus);
  let opened: Promise<ObjectBucket | undefined> | undefined;
  const bucket = (): Promise<ObjectBucket | undefined> => (opened ??= objects!(codeBucketName(flags.cluster), { create: false }).catch((err: unknown) => ((opened = undefined), Promise.reject(err))));
  const sweeper = objects
    ? new CodeStoreSweeper({ bucket, graceMs: flags.codeSweepMs, ...(lease ? { valid: () => lease.valid() } : {}), log: main.say })
    : undefined;
  sweeper?.start();
  return { gcs, store, lease, inspection, ...(sweeper ? { sweeper } : {}) };
}

async function stepDown(serving: Serving): Promise<void> {
  await serving.sweeper?.stop();
  await serving.gcs.stop();
  serving.inspection?.stop();
  await serving.store?.close();
}

/** Holds the lease or waits for it, serves while it holds it, and waits again after losing it. */
async function leaderLoop(kv: KeyValue): Promise<void> {
  const bucket = await kv.bucket(bucketName('orrery', flags.cluster, 'leader'));
  const holder = `${hostname()}:${process.pid}`;
  while (!main.stopping) {
    const lease = new LeaderLease({ bucket, holder, ttlMs: flags.leaseMs, log: main.say });
    const epoch = await lease.acquire((held) => {
      main.say(`standby: the leader lease is held by ${held.holder} (epoch ${held.epoch}); taking over when it goes ${lease.ttlMs} ms without renewal`);
      ready({ standby: true });
    });
    if (main.stopping) return lease.stop();
    main.say(`holding the leader lease with epoch ${epoch}`);
    const valid = () => lease.valid();
    const store = await KvStore.open(kv, { cluster: flags.cluster, log: main.say, valid });
    const { nodes, actors } = store.counts();
    main.say(`tables in JetStream KV: ${nodes} node(s), ${actors} actor(s) stored`);
    current = await serve(fencedBus(bus, lease, { log: main.say }), store, lease);
    ready({ epoch });
    const why = await lease.lost;
    if (main.stopping) return;
    main.say(`stepping down: ${why}`);
    const was = current;
    current = undefined;
    await stepDown(was);
  }
}

try {
  const kv = flags.persist === 'off' ? undefined : await bus.keyValue?.();
  if (kv) {
    void leaderLoop(kv).catch((err) => main.fail(1, `leader election failed: ${err instanceof Error ? err.message : String(err)}`));
  } else {
    if (flags.persist === 'on') throw new Error(`--persist on: the NATS server at ${flags.address} has no JetStream (start it with -js)`);
    if (flags.persist === 'auto') main.say('the NATS server has no JetStream: the GCS keeps its tables in memory (a restart loses them)');
    current = await serve(bus, undefined);
    ready({});
  }
} catch (err) {
  await bus.close().catch(() => undefined);
  main.fail(1, `cannot start: ${err instanceof Error ? err.message : String(err)}`);
}

main.onSignals(async () => {
  const serving = current;
  serving?.lease?.stop(); // no longer the leader: nothing more is written or sent as one
  if (serving) await stepDown(serving);
  // then hand the lease over: a standby takes it at once rather than after its ttl (leader.ts)
  await serving?.lease?.release();
  await bus.close().catch(() => undefined);
});

await bus.closed;
if (!main.stopping) main.fail(1, `lost the connection to NATS at ${flags.address}`);
