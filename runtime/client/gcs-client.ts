import { encode } from '../../protocols/codec.ts';
import type { MessageBody, MessageType } from '../../protocols/messages/registry.ts';
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
}
