import { encode } from '../../protocols/codec.ts';
import {
  autoscalerStatusReply,
  resourceDemandsReply,
  type AutoscalerEvent,
  type AutoscalerStatus,
  type AutoscalerStatusReply,
  type ResourceDemandsReply,
} from '../../protocols/messages/autoscaling.ts';
import { gcsStatus, type GcsStatusWire } from '../../protocols/messages/cluster.ts';
import { MAX_PAGE_LIMIT, page } from '../../protocols/messages/page.ts';
import type { MessageBody, MessageType } from '../../protocols/messages/registry.ts';
import { ProtocolError } from '../../protocols/errors.ts';
import { decodeReply } from '../../protocols/reply.ts';
import type { ClusterSubjects, GcsVerb } from '../../protocols/subjects.ts';
import { object, type Validator } from '../../protocols/validate.ts';
import type { Bus, BusMsg } from '../bus/bus.ts';
import { NoRespondersError } from '../bus/errors.ts';
import { GcsUnavailableError, specializeWireError } from './errors.ts';

/** Which message type each GCS verb the client uses carries. */
const MESSAGE_OF = {
  register_actor: 'register_actor',
  get_actor: 'get_actor',
  kill_actor: 'kill_actor',
  list_nodes: 'list_nodes',
  list_actors: 'list_actors',
  set_node_labels: 'set_node_labels',
  set_node_taints: 'set_node_taints',
  list_events: 'list_events',
  create_pg: 'create_pg',
  remove_pg: 'remove_pg',
  get_pg: 'get_pg',
  list_placement_groups: 'list_placement_groups',
  explain: 'explain',
  drain_node: 'drain_node',
  resource_demands: 'resource_demands',
  autoscaler_report: 'autoscaler_report',
  autoscaler_status: 'autoscaler_status',
  register_job: 'register_job',
  job_heartbeat: 'job_heartbeat',
  finish_job: 'finish_job',
  list_jobs: 'list_jobs',
  gcs_status: 'gcs_status',
} as const satisfies Partial<Record<GcsVerb, MessageType>>;
type ClientVerb = keyof typeof MESSAGE_OF;
/** A reply that carries nothing (`{}`). */
const ANY_OBJECT = object({});
/** The verbs whose reply is a page (protocols/messages/page.ts). */
type PagedVerb = 'list_actors' | 'list_nodes' | 'list_placement_groups' | 'list_jobs';

/**
 * Requests to the GCS: encodes the body, waits for the reply, checks its value, and rethrows an error
 * reply as its class (ActorNotFoundError, NodeNotFoundError, …). No GCS at all is a
 * GcsUnavailableError naming the cluster and address.
 *
 * A client that has reached a GCS once rides through its outage (a restart, a standby taking over):
 * a request nobody answers (NO_RESPONDERS, TIMEOUT, CONNECTION_LOST) is sent again, pausing 100 ms, then twice as
 * long each time up to a second, for at most `outageMs` (default 15 s) before it fails. Every verb is
 * safe to send twice: registrations carry their id, kills and label changes are idempotent. A client
 * that never reached one fails at once: its address or cluster name is more likely wrong.
 *
 * A request that went to a GCS frozen or cut off from the bus gets no answer until its attempt times
 * out (`timeoutMs`, 10 s by default): no one else saw it. So when a GCS opens its subjects — a
 * standby taking over, a restart — and says so (the gcs_leader event, `leaderChanged()`), every
 * request still waiting for an answer is sent again at once, to it.
 */
export const DEFAULT_GCS_OUTAGE_MS = 15_000;

/** What an attempt resolves with when a GCS announced itself before the attempt was answered. */
const NEW_LEADER = Symbol('new GCS');

export class GcsClient {
  #reached = false;
  /** The attempts waiting for an answer and the pauses between attempts, each told when a GCS announces itself. */
  readonly #waiting = new Set<() => void>();

  constructor(
    private readonly bus: Bus,
    private readonly subjects: ClusterSubjects,
    private readonly opts: { address: string; timeoutMs: number; outageMs?: number },
  ) {}

  async request<V extends ClientVerb, T>(verb: V, body: MessageBody<(typeof MESSAGE_OF)[V]>, value: Validator<T>): Promise<T> {
    const data = encode(MESSAGE_OF[verb], body as never);
    const reply = await this.#send(this.subjects.gcs(verb), data);
    try {
      return decodeReply(reply.data, { value });
    } catch (err) {
      throw specializeWireError(err);
    }
  }

  /**
   * One attempt, no riding through an outage: for what is sent again anyway (a job's heartbeat) or
   * must not hold its caller up (finishing a job on close). A GCS nobody answers for is NO_RESPONDERS
   * as the bus says it.
   */
  async requestOnce<V extends ClientVerb, T>(verb: V, body: MessageBody<(typeof MESSAGE_OF)[V]>, value: Validator<T>, timeoutMs = this.opts.timeoutMs): Promise<T> {
    const reply = await this.bus.request(this.subjects.gcs(verb), encode(MESSAGE_OF[verb], body as never), { timeoutMs });
    return this.read(reply.data, value);
  }

  /** A request's subject and bytes, for one sent from elsewhere (a driver's heartbeat thread: job-beat-thread.ts). */
  prepared<V extends ClientVerb>(verb: V, body: MessageBody<(typeof MESSAGE_OF)[V]>): { subject: string; data: Uint8Array } {
    return { subject: this.subjects.gcs(verb), data: encode(MESSAGE_OF[verb], body as never) };
  }

  /** The value of an answer from the GCS, or its error as requestOnce() throws it. */
  read<T>(data: Uint8Array, value: Validator<T>): T {
    this.#reached = true;
    try {
      return decodeReply(data, { value });
    } catch (err) {
      throw specializeWireError(err);
    }
  }

  /**
   * What waits in the pending queue, grouped by everything that changes where it can go, and the
   * live nodes as the GCS's scheduler holds them (protocols/messages/autoscaling.ts). At most `limit`
   * groups of actors and of placement groups each (default 1,000). The admin role's.
   */
  resourceDemands(limit?: number): Promise<ResourceDemandsReply> {
    return this.request('resource_demands', limit === undefined ? {} : { limit }, resourceDemandsReply);
  }

  /** The autoscaler's status (kept by the GCS for `orrery status`) and its events (published as cluster events). The admin role's. */
  async autoscalerReport(status: AutoscalerStatus, events: readonly AutoscalerEvent[]): Promise<void> {
    await this.request('autoscaler_report', { status, events: [...events] }, ANY_OBJECT);
  }

  /** The latest status an autoscaler reported; `status: null` when none has since the GCS started. */
  autoscalerStatus(): Promise<AutoscalerStatusReply> {
    return this.request('autoscaler_status', {}, autoscalerStatusReply);
  }

  /** What the GCS is doing now (recovering, serving): answered at once, where reads wait while it recovers. */
  gcsStatus(): Promise<GcsStatusWire> {
    return this.request('gcs_status', {}, gcsStatus);
  }

  /** A GCS opened its subjects (a gcs_leader event): the requests not answered yet go again, to it. */
  leaderChanged(): void {
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const go of waiting) go();
  }

  /** How many requests wait for an answer now. */
  get waiting(): number {
    return this.#waiting.size;
  }

  async #send(subject: string, data: Uint8Array): Promise<BusMsg> {
    let deadline: number | undefined;
    let pause = 100;
    for (;;) {
      try {
        const reply = await this.#attempt(subject, data);
        if (reply === NEW_LEADER) continue; // sent again at once, to the GCS that announced itself
        this.#reached = true;
        return reply;
      } catch (err) {
        const code = (err as { code?: string }).code;
        const unanswered = err instanceof NoRespondersError || code === 'TIMEOUT' || code === 'CONNECTION_LOST';
        deadline ??= Date.now() + (this.opts.outageMs ?? DEFAULT_GCS_OUTAGE_MS);
        if (!unanswered || !this.#reached || Date.now() + pause > deadline) {
          if (err instanceof NoRespondersError) throw new GcsUnavailableError(this.subjects.cluster, this.opts.address, { cause: err });
          throw err;
        }
        // the pause ends early when a GCS announces itself
        await new Promise<void>((resolve) => {
          const go = (): void => {
            clearTimeout(timer);
            this.#waiting.delete(go);
            resolve();
          };
          const timer = setTimeout(go, pause);
          this.#waiting.add(go);
        });
        pause = Math.min(pause * 2, 1000);
      }
    }
  }

  /** One attempt: its answer, its failure, or NEW_LEADER when a GCS announced itself first (the answer, should it come, is dropped). */
  #attempt(subject: string, data: Uint8Array): Promise<BusMsg | typeof NEW_LEADER> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const told = (): void => {
        settled = true;
        resolve(NEW_LEADER);
      };
      this.#waiting.add(told);
      this.bus.requestCallback(subject, data, { timeoutMs: this.opts.timeoutMs }, (err, msg) => {
        this.#waiting.delete(told);
        if (settled) return;
        settled = true;
        if (err !== undefined) reject(err);
        else resolve(msg!);
      });
    });
  }

  /**
   * Every item of a paged list: asks for the largest pages and follows `next` until the GCS has no
   * more. Items are in id order; the walk sees each item present throughout it exactly once.
   */
  async all<V extends PagedVerb, T>(verb: V, body: Omit<MessageBody<(typeof MESSAGE_OF)[V]>, 'after' | 'limit'>, item: Validator<T>): Promise<T[]> {
    const out: T[] = [];
    const validator = page(item);
    let after: string | undefined;
    for (;;) {
      const reply = await this.request(verb, { ...body, limit: MAX_PAGE_LIMIT, after } as MessageBody<(typeof MESSAGE_OF)[V]>, validator);
      out.push(...reply.items);
      if (reply.next === undefined) return out;
      // the cursor only moves forward; one that does not would walk forever
      if (after !== undefined && reply.next <= after) throw new ProtocolError('INVALID_MESSAGE', `${verb}: the next page's cursor does not move forward`, { detail: { path: 'value.next', rule: 'after the previous cursor' } });
      after = reply.next;
    }
  }
}
