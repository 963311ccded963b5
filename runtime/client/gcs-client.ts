import { encode } from '../../protocols/codec.ts';
import { MAX_PAGE_LIMIT, page } from '../../protocols/messages/page.ts';
import type { MessageBody, MessageType } from '../../protocols/messages/registry.ts';
import { ProtocolError } from '../../protocols/errors.ts';
import { decodeReply } from '../../protocols/reply.ts';
import type { ClusterSubjects, GcsVerb } from '../../protocols/subjects.ts';
import type { Validator } from '../../protocols/validate.ts';
import type { Bus } from '../bus/bus.ts';
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
} as const satisfies Partial<Record<GcsVerb, MessageType>>;
type ClientVerb = keyof typeof MESSAGE_OF;
/** The verbs whose reply is a page (protocols/messages/page.ts). */
type PagedVerb = 'list_actors' | 'list_nodes' | 'list_placement_groups';

/**
 * Requests to the GCS: encodes the body, waits for the reply, checks its value, and rethrows an error
 * reply as its class (ActorNotFoundError, NodeNotFoundError, …). No GCS at all is a
 * GcsUnavailableError naming the cluster and address.
 */
export class GcsClient {
  constructor(
    private readonly bus: Bus,
    private readonly subjects: ClusterSubjects,
    private readonly opts: { address: string; timeoutMs: number },
  ) {}

  async request<V extends ClientVerb, T>(verb: V, body: MessageBody<(typeof MESSAGE_OF)[V]>, value: Validator<T>): Promise<T> {
    const data = encode(MESSAGE_OF[verb], body as never);
    let reply;
    try {
      reply = await this.bus.request(this.subjects.gcs(verb), data, { timeoutMs: this.opts.timeoutMs });
    } catch (err) {
      if (err instanceof NoRespondersError) throw new GcsUnavailableError(this.subjects.cluster, this.opts.address, { cause: err });
      throw err;
    }
    try {
      return decodeReply(reply.data, { value });
    } catch (err) {
      throw specializeWireError(err);
    }
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
