import { randomBytes } from 'node:crypto';
import { OrreryError } from '../../lib/errors.ts';
import { registered } from '../../protocols/messages/cluster.ts';
import { bool, num, object, type Infer } from '../../protocols/validate.ts';
import type { LocalBundles } from './bundles.ts';
import type { RayletConfig } from './config.ts';
import { leaseFromNodeTimeout, type Fence } from './fence.ts';
import { askGcs, type GcsLink } from './gcs-link.ts';
import type { Leases } from './leases.ts';
import type { LocalActors } from './local-actors.ts';
import type { RayletTasks } from './raylet-tasks.ts';
import { runningParts } from './registration-parts.ts';

/** `available` for the names of `total` only: what a registration reports free. */
function ownNames(available: Readonly<Record<string, number>>, total: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of Object.keys(total)) if (available[name] !== undefined) out[name] = available[name];
  return out;
}

const unregisterAnswer = object({ known: bool() });
const stagedAnswer = object({ staged: num({ int: true, min: 0 }) });

/**
 * The node's registration with the GCS (the Raylet machine's `register`): what it is and what still
 * runs here, in parts when that is long (registration-parts.ts); the answer sets the epoch, the rare
 * resources, the fence's lease and the heartbeat pace. And, once registered, the unregistration a
 * graceful stop sends.
 */
export interface NodeRegistrationDeps {
  readonly gcs: GcsLink;
  readonly config: RayletConfig;
  readonly log: (line: string) => void;
  readonly leases: Pick<Leases, 'available'>;
  readonly actors: Pick<LocalActors, 'running'>;
  readonly bundles: Pick<LocalBundles, 'list'>;
  readonly tasks: Pick<RayletTasks, 'setRareResources'>;
  readonly fence: Pick<Fence, 'setLease' | 'acked'>;
  /** RayletServiceOptions.registrationPartBytes. */
  readonly partBytes?: number;
  /** RayletServiceOptions.fenceLeaseFraction. */
  readonly fenceLeaseFraction?: number;
}

export class NodeRegistration {
  /** NODE_NAME_TAKEN was logged for the current wait (said once, not per retry). */
  private nameTakenSaid = false;

  /** Registration attempts begun: one that is no longer the newest stops sending its parts. */
  private registerAttempts = 0;

  /** A registration went through: a graceful stop then tells the GCS (unregister). */
  private registered = false;

  constructor(private readonly deps: NodeRegistrationDeps) {}

  async register(): Promise<{ heartbeatMs: number }> {
    const { gcs, config } = this.deps;
    const attempt = ++this.registerAttempts;
    // what still runs here: a restarted GCS keeps what it agrees with and has the rest killed; a
    // list larger than one message goes ahead in parts (registration-parts.ts)
    const parts = runningParts({ actors: this.deps.actors.running(), bundles: this.deps.bundles.list() }, this.deps.partBytes);
    const last = parts[parts.length - 1]!;
    let earlier: { batch: string; parts: number } | undefined;
    if (parts.length > 1) {
      earlier = { batch: randomBytes(12).toString('base64url'), parts: parts.length - 1 };
      for (let index = 0; index < parts.length - 1; index++) {
        // an attempt the machine gave up on (GCS_ANNOUNCED: a new GCS) sends nothing more
        if (attempt !== this.registerAttempts) throw new OrreryError('TIMEOUT', 'registration superseded by a newer attempt');
        await askGcs(gcs, 'register_running', { nodeId: config.nodeId, batch: earlier.batch, index, ...parts[index]!, secret: gcs.secret }, stagedAnswer);
      }
    }
    const body = {
      nodeId: config.nodeId,
      name: config.nodeName,
      labels: config.labels,
      taints: config.taints,
      // the node's own names only: the GCS takes bundle resources back from `running` (a node with
      // 30,000 bundles has 60,000 such names, 2 MB); it never read them here
      resources: { total: config.total, available: ownNames(this.deps.leases.available(), config.total) },
      address: { ip: config.nodeIp, hostname: config.hostname, pid: process.pid },
      running: earlier === undefined ? last : { ...last, earlier },
      secret: gcs.secret,
    };
    const sentAt = performance.now();
    let reply: Infer<typeof registered>;
    try {
      reply = await askGcs(gcs, 'register_node', body, registered);
    } catch (err) {
      if ((err as { code?: unknown }).code === 'NODE_NAME_TAKEN' && !this.nameTakenSaid) {
        this.nameTakenSaid = true;
        const holder = String(((err as OrreryError).detail as { holder?: unknown } | undefined)?.holder ?? '?');
        this.deps.log(
          `raylet ${config.nodeId}: the node name ${JSON.stringify(config.nodeName)} belongs to live node ${holder}; registering again until it is free (its node declared dead). To run several raylets on one host, give each its own --node-name.`,
        );
      }
      throw err;
    }
    this.nameTakenSaid = false;
    this.registered = true;
    gcs.epoch.check(reply.epoch);
    this.deps.tasks.setRareResources(reply.rareResources);
    if (reply.nodeTimeoutMs !== undefined) this.deps.fence.setLease(leaseFromNodeTimeout(reply.nodeTimeoutMs, this.deps.fenceLeaseFraction));
    this.deps.fence.acked(sentAt); // the GCS starts the node's timeout when it registers it
    return { heartbeatMs: reply.heartbeatMs };
  }

  /**
   * Tells the GCS this node is gone (gcs.unregister_node), once its worker hosts are stopped, so it
   * restarts the node's actors without waiting out the node timeout. Best effort: a GCS that cannot
   * be reached declares the node dead at its timeout, as before.
   */
  async unregister(): Promise<void> {
    if (!this.registered) return;
    const { gcs, log } = this.deps;
    try {
      await askGcs(gcs, 'unregister_node', { nodeId: gcs.nodeId, secret: gcs.secret }, unregisterAnswer);
      log(`raylet ${gcs.nodeId}: unregistered from the GCS`);
    } catch (err) {
      log(`raylet ${gcs.nodeId}: could not unregister (the GCS declares the node dead at its timeout): ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
