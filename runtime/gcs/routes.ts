import { InvalidOptionError } from '../../lib/errors.ts';
import { provenError, provenValue, type ProvenVerb } from '../../protocols/answer-proof.ts';
import type { MessageType } from '../../protocols/messages/registry.ts';
import { ProtocolError } from '../../protocols/errors.ts';
import { parseSubject, type GcsVerb } from '../../protocols/subjects.ts';
import type { Subscription } from '../bus/bus.ts';
import { nodesPage, pageOfList } from './paging.ts';
import type { GcsService } from './service.ts';
import type { Handler } from './wire.ts';

/**
 * Every GCS verb of the subject grammar, with the message type it takes and what answers it. The
 * table is typed over GcsVerb, so a verb added to the protocol cannot be forgotten here. A verb
 * whose message the protocol does not define (none today) is served all the same and answers every
 * message UNKNOWN_TYPE — a typed "not spoken here" rather than NO_RESPONDERS, which would read as
 * "no GCS".
 */
type Route = { [K in MessageType]: { type: K; handle: Handler<K> } }[MessageType] | { type: undefined };

function route<K extends MessageType>(type: K, handle: Handler<K>): Route {
  return { type, handle } as Route;
}

/**
 * A verb that changes what the GCS knows: it waits while the GCS recovers (gcs.machine.ts), and is
 * answered only once what it changed is stored (store.ts `durable`), so nothing acknowledged is lost
 * with the GCS.
 */
function mutating<T>(gcs: GcsService, run: () => T | Promise<T>): Promise<T> {
  return Promise.resolve(
    restored(gcs, async () => {
      const value = await run();
      await gcs.store.durable();
      return value;
    }),
  );
}

/**
 * A read of what a recovery restores only when it reconciles (actors, placement groups, the nodes
 * that did not come back: recovery.ts): it waits while the GCS recovers, as a mutating verb does.
 * Answered before, it said a stored actor or group did not exist (get_actor: ACTOR_NOT_FOUND, so
 * `getActor(name)` failed for a named actor that ran all along; get_pg: PLACEMENT_GROUP_NOT_FOUND),
 * left things out of a list, listed a node as the store left it (ALIVE, though it never came back),
 * explained a placement against half a cluster, or showed the autoscaler nodes idle that run actors.
 */
function restored<T>(gcs: GcsService, run: () => T | Promise<T>): T | Promise<T> {
  return gcs.isServing ? run() : gcs.serving.then(run);
}

/**
 * A raylet's request that carries its node's secret and a nonce is answered with a proof, under that
 * secret, of what the answer says (protocols/answer-proof.ts): the node inbox it goes to is read by
 * every node-role connection, and the raylet takes no answer without the proof once it has seen one.
 */
function proven<T>(body: { secret?: string; nonce?: string }, verb: ProvenVerb, run: () => T | Promise<T>): T | object | Promise<object> {
  const { secret, nonce } = body;
  if (secret === undefined || nonce === undefined) return run();
  const ok = (value: T): object => provenValue(value, secret, verb, nonce);
  const fail = (err: unknown): never => {
    throw provenError(err, secret, verb, nonce);
  };
  try {
    const value = run();
    return value instanceof Promise ? value.then(ok, fail) : ok(value);
  } catch (err) {
    return fail(err);
  }
}

export function routes(gcs: GcsService): Record<GcsVerb, Route> {
  // list replies are pages (paging.ts) that fit in one message of the size the GCS accepts
  const paged = { maxBytes: gcs.intake.maxBytes };
  return {
    register_node: route('register_node', (body) => proven(body, 'register_node', () => gcs.nodes.register(body))),
    // held in memory until its register_node: answered while the GCS recovers, as register_node is
    register_running: route('register_running', (body) => proven(body, 'register_running', () => gcs.nodes.stageRunning(body))),
    heartbeat: route('heartbeat', (body) => proven(body, 'heartbeat', () => gcs.nodes.heartbeat(body))),
    unregister_node: route('unregister_node', (body) => proven(body, 'unregister_node', () => mutating(gcs, () => gcs.nodes.unregister(body)))),
    register_actor: route('register_actor', (body) => mutating(gcs, () => gcs.registrations.run(() => gcs.actors.register(body)))),
    get_actor: route('get_actor', (body) => restored(gcs, () => gcs.actors.get(body))),
    kill_actor: route('kill_actor', (body) => mutating(gcs, () => gcs.actors.kill(body))),
    list_nodes: route('list_nodes', (body) => restored(gcs, () => nodesPage(gcs.nodes.list(), body, paged))),
    list_actors: route('list_actors', (body) => restored(gcs, () => gcs.actors.page(body, paged))),
    set_node_labels: route('set_node_labels', (body) => mutating(gcs, () => gcs.nodes.setLabels(body))),
    set_node_taints: route('set_node_taints', (body) => mutating(gcs, () => gcs.nodes.setTaints(body))),
    drain_node: route('drain_node', (body) => mutating(gcs, () => gcs.nodes.drain(body))),
    view_snapshot: route('view_snapshot', (body) => gcs.view.snapshotPage(body, paged)),
    actor_died: route('actor_died', (body) => proven(body, 'actor_died', () => mutating(gcs, () => (gcs.nodes.owners.check(body.nodeId, body.secret, 'actor_died'), gcs.actors.died(body))))),
    list_events: route('list_events', (body) => gcs.history.query(body)),
    list_placement_groups: route('list_placement_groups', (body) => restored(gcs, () => pageOfList(gcs.groups.list(), (pg) => pg.id, body, paged))),
    create_pg: route('create_pg', (body) => mutating(gcs, () => gcs.registrations.run(() => gcs.groups.create(body)))),
    remove_pg: route('remove_pg', (body) => mutating(gcs, () => gcs.groups.remove(body))),
    get_pg: route('get_pg', (body) => restored(gcs, () => gcs.groups.getStored(body))),
    explain: route('explain', (body) => {
      if ((body.options === undefined) === (body.placementGroup === undefined)) {
        throw new InvalidOptionError('explain', body, 'expected exactly one of options (an actor) and placementGroup');
      }
      return restored(gcs, () => (body.options !== undefined ? gcs.actors.explain(body.namespace, body.options) : gcs.groups.explain(body.namespace, body.placementGroup!)));
    }),
    // the autoscaler's view: while recovering, the queue is empty and nodes look idle that are not
    resource_demands: route('resource_demands', (body) => restored(gcs, () => gcs.demands.resourceDemands(body))),
    autoscaler_report: route('autoscaler_report', (body) => gcs.autoscaler.report(body)),
    autoscaler_status: route('autoscaler_status', () => gcs.autoscaler.status()),
    register_job: route('register_job', (body) => mutating(gcs, () => gcs.jobs.register(body))),
    // a heartbeat changes nothing stored: it is answered while the GCS recovers too
    job_heartbeat: route('job_heartbeat', (body) => gcs.jobs.heartbeat(body)),
    finish_job: route('finish_job', (body) => mutating(gcs, () => gcs.jobs.finish(body))),
    list_jobs: route('list_jobs', (body) => pageOfList(gcs.jobs.list(), (j) => j.jobId, body, paged)),
    // answered at once while the GCS recovers: it says so, where the reads above wait
    gcs_status: route('gcs_status', () => gcs.status()),
  };
}

/** Subscribes every verb (no queue group: see protocols/subjects.ts); the subscriptions end when the GCS stops. */
export function serveVerbs(gcs: GcsService): Subscription[] {
  const table = routes(gcs);
  const verbs = (Object.keys(table) as GcsVerb[]).map((verb) => {
    const r = table[verb];
    const where = { subject: gcs.subjects.gcs(verb), verb };
    return r.type === undefined
      ? gcs.intake.serve(gcs.opts.bus, where, undefined, () => undefined)
      : gcs.intake.serve(gcs.opts.bus, where, r.type, r.handle as Handler<MessageType>);
  });
  return [...verbs, serveLoads(gcs)];
}

/**
 * The raylets' load reports (`raylet.<nodeId>.load`, published, not asked): through the intake, so a
 * malformed one is counted and changes nothing, then into the next view delta (view.ts `load`). A
 * report whose body names another node than its subject is refused as INVALID_MESSAGE.
 */
function serveLoads(gcs: GcsService): Subscription {
  return gcs.intake.serve(gcs.opts.bus, { subject: gcs.subjects.allLoads(), verb: 'raylet_load' }, 'raylet_load', (body, msg) => {
    const parsed = parseSubject(msg.subject);
    if (parsed.kind !== 'raylet' || parsed.nodeId !== body.nodeId) {
      throw new ProtocolError('INVALID_MESSAGE', 'nodeId: not the node of the subject the report came on', { detail: { path: 'nodeId', value: body.nodeId } });
    }
    gcs.view.load(body.nodeId, body.available);
  });
}
