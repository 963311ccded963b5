import { OrreryError } from '../../lib/errors.ts';
import { checkCodeSource } from '../../protocols/code-source.ts';
import { decode } from '../../protocols/codec.ts';
import { messages } from '../../protocols/messages/registry.ts';
import { encodeError, encodeOk } from '../../protocols/reply.ts';
import { RayletVerb } from '../../protocols/subjects.ts';
import type { BusMsg, Subscription } from '../bus/bus.ts';
import type { MalformedCounter } from '../worker/malformed.ts';
import { respond } from '../worker/respond.ts';
import type { LocalBundles } from './bundles.ts';
import type { RayletConfig } from './config.ts';
import type { GcsLink } from './gcs-link.ts';
import { codeSources } from './host-launcher.ts';
import type { LocalActors } from './local-actors.ts';
import type { RayletTasks } from './raylet-tasks.ts';
import { errorWithSecret, withSecret } from './signed-answers.ts';

const KILL_TYPE = 'raylet_kill_actor';
/** The message types that each take one raylet subject of their own name. */
type Served = 'create_actor' | typeof KILL_TYPE | 'prepare_bundle' | 'commit_bundle' | 'cancel_bundle';

/**
 * The subjects a raylet serves, subscribed before it registers: create_actor / kill_actor answered by
 * its actors (local-actors.ts), prepare_bundle / commit_bundle / cancel_bundle by its bundles
 * (bundles.ts), its task subjects (raylet-tasks.ts), the gcs_leader event (gcs-announced.ts), and
 * UNSUPPORTED for every other raylet verb. The answers the GCS acts on are signed with the node's
 * secret (signed-answers.ts).
 */
export interface ServedSubjectsDeps {
  readonly gcs: GcsLink;
  readonly config: RayletConfig;
  readonly malformed: MalformedCounter;
  readonly actors: Pick<LocalActors, 'create' | 'kill'>;
  readonly bundles: Pick<LocalBundles, 'prepare' | 'commit' | 'cancel'>;
  readonly tasks: Pick<RayletTasks, 'subscribe'>;
}

export class ServedSubjects {
  private subs: Subscription[] = [];

  constructor(private readonly deps: ServedSubjectsDeps) {}

  /** The raylet's own subjects, subscribed before it registers; a gcs_leader event goes to `announced`. */
  async subscribe(announced: (msg: BusMsg) => void): Promise<void> {
    const { bus, subjects, nodeId } = this.deps.gcs;
    const { actors, bundles, tasks } = this.deps;
    const on = (verb: RayletVerb, handler: (msg: BusMsg) => void) => this.subs.push(bus.subscribe(subjects.raylet(nodeId, verb), handler));
    on(
      RayletVerb.create_actor,
      this.signed('create_actor', async (body) => {
        checkCodeSource(body.code.moduleUrl, codeSources(this.deps.config));
        return actors.create(body);
      }),
    );
    on(RayletVerb.kill_actor, this.signed(KILL_TYPE, (body) => actors.kill(body.actorId, body.incarnation)));
    on(RayletVerb.prepare_bundle, this.signed('prepare_bundle', async (body) => bundles.prepare(body)));
    on(RayletVerb.commit_bundle, this.signed('commit_bundle', async (body) => bundles.commit(body.bundles)));
    on(RayletVerb.cancel_bundle, this.signed('cancel_bundle', async (body) => bundles.cancel(body.bundles)));
    this.subs.push(...tasks.subscribe());
    this.subs.push(bus.subscribe(subjects.event('gcs_leader'), (msg) => announced(msg)));
    // load is published by a raylet, not requested of it
    const served = new Set<string>([
      RayletVerb.create_actor,
      RayletVerb.kill_actor,
      RayletVerb.prepare_bundle,
      RayletVerb.commit_bundle,
      RayletVerb.cancel_bundle,
      RayletVerb.submit_task,
      RayletVerb.cancel_task,
      RayletVerb.load,
    ]);
    for (const verb of Object.values(RayletVerb)) {
      if (served.has(verb)) continue;
      on(verb, (msg) => {
        const err = new OrreryError('UNSUPPORTED', `this raylet does not serve ${verb} yet`, { detail: { verb } });
        respond(msg, () => encodeError(err));
      });
    }
    await bus.flush();
  }

  /** Drops every subscription (the raylet stopping or crashing). */
  unsubscribe(): void {
    for (const sub of this.subs) sub.unsubscribe();
    this.subs = [];
  }

  /**
   * Answers that the GCS acts on — a create's outcome, a bundle's, a kill's — carry this node's
   * secret (in the value, or in the error's detail), so that no other node-role connection
   * subscribed to this node's subjects can answer for it (runtime/gcs/node-owner.ts, `answeredBy`).
   */
  private signed<K extends Served>(type: K, run: (body: ReturnType<(typeof messages)[K]>) => Promise<unknown>) {
    return this.handler(type, run, this.deps.gcs.secret);
  }

  /** Decodes with the one message type a subject takes; anything else is refused with its wire error. */
  private handler<K extends Served>(type: K, run: (body: ReturnType<(typeof messages)[K]>) => Promise<unknown>, secret?: string) {
    const registry = { [type]: messages[type] } as Record<K, (typeof messages)[K]>;
    const ok = (value: unknown): Uint8Array => encodeOk(secret === undefined ? value : withSecret(value, secret));
    const error = (err: unknown): Uint8Array => encodeError(secret === undefined ? err : errorWithSecret(err, secret));
    return (msg: BusMsg): void => {
      let body: ReturnType<(typeof messages)[K]>;
      try {
        body = decode(msg.data, { registry }).body as ReturnType<(typeof messages)[K]>;
        this.deps.gcs.epoch.check((body as { epoch?: number }).epoch);
      } catch (err) {
        this.deps.malformed.count(err);
        respond(msg, () => error(err));
        return;
      }
      run(body).then(
        (value) => respond(msg, () => ok(value)),
        (err: unknown) => respond(msg, () => error(err)),
      );
    };
  }
}
