import { OrreryError } from '../../lib/errors.ts';
import { CodeSourceRefusedError } from '../../protocols/code-source.ts';
import { NodeNotOwnedError } from './node-owner.ts';
import { JobNotOwnedError } from '../errors.ts';
import { decode } from '../../protocols/codec.ts';
import { ProtocolError, WireErrorCode } from '../../protocols/errors.ts';
import { messages, type MessageBody, type MessageRegistry, type MessageType } from '../../protocols/messages/registry.ts';
import { encodeError, encodeOk } from '../../protocols/reply.ts';
import { assertToken } from '../../protocols/subjects.ts';
import type { Bus, BusMsg, Subscription } from '../bus/bus.ts';
import { RejectionLog } from '../process/rejection-log.ts';

/**
 * The GCS's intake: every request subject is served through here. A message is decoded with the
 * codec against a registry holding only the verb's own message type (so a well-formed message of
 * another type is UNKNOWN_TYPE here), then handed to the handler. The answer goes back as a reply
 * when the message has a reply subject:
 *
 *   - what the codec refuses (MALFORMED, VERSION_MISMATCH, UNKNOWN_TYPE, INVALID_MESSAGE,
 *     TOO_LARGE), and any ProtocolError a handler raises about the body (an id that cannot be a
 *     subject token, a query naming nothing), is a wire error: counted by code and by verb, logged
 *     once per code and then summed up once a minute while more come (RejectionLog), and it
 *     changes no state — the handler never ran, or threw before changing any;
 *     so is code the cluster does not load (CODE_SOURCE_REFUSED, protocols/code-source.ts), a
 *     message about a node that does not carry that node's secret (NODE_NOT_OWNED, node-owner.ts)
 *     or about a job without that job's secret (JOB_NOT_OWNED, jobs.ts),
 *     and a verb asked from a role's inbox that the role may not ask (PERMISSION_DENIED);
 *   - a domain error (OrreryError: NODE_NOT_FOUND, ACTOR_NAME_TAKEN, INVALID_OPTION, …) is answered
 *     with its code and is not counted;
 *   - anything else is answered INTERNAL and logged.
 *
 * Nothing a peer sends can throw out of a handler, so the process never exits because of it.
 */
export interface WireErrorCounts {
  /** Refused messages in all. */
  readonly total: number;
  readonly byCode: Readonly<Record<string, number>>;
  readonly byVerb: Readonly<Record<string, number>>;
}

export type Handler<K extends MessageType> = (body: MessageBody<K>, msg: BusMsg) => unknown;

/** A verb asked from the inbox of a role that may not ask it (PERMISSION_DENIED, as the NATS server's own refusals). */
export class RoleRefusedError extends OrreryError {
  override name = 'RoleRefusedError';
  constructor(verb: string, reply: string | undefined) {
    const role = reply?.split('.')[2] ?? '?';
    super('PERMISSION_DENIED', `the ${role} role may not ask the GCS to ${verb} (docs/security.md, "Roles")`, { detail: { verb, role } });
  }
}

export class WireIntake {
  readonly #byCode = new Map<string, number>();
  readonly #byVerb = new Map<string, number>();
  readonly #rejections: RejectionLog;
  #total = 0;

  /**
   * `mayRequest`: whether a request whose reply inbox belongs to a role (runtime/auth/roles.ts,
   * `inboxRole`) may ask this verb; refused as PERMISSION_DENIED, counted, before it is decoded.
   * The NATS server enforces the same lists on a secured cluster; this holds when its configuration
   * was loosened or a role's credentials are used beyond their role.
   */
  constructor(private readonly opts: { log: (line: string) => void; maxBytes: number; mayRequest?: (verb: string, reply: string | undefined) => boolean }) {
    this.#rejections = new RejectionLog('refused a message', opts.log);
  }

  /** Largest message this intake accepts. */
  get maxBytes(): number {
    return this.opts.maxBytes;
  }

  counts(): WireErrorCounts {
    return { total: this.#total, byCode: Object.fromEntries(this.#byCode), byVerb: Object.fromEntries(this.#byVerb) };
  }

  /**
   * Subscribes `subject` for messages of `type`; with no type, every message
   * is refused as UNKNOWN_TYPE (a verb of the grammar this GCS does not implement yet).
   */
  serve<K extends MessageType>(bus: Bus, where: { subject: string; verb: string }, type: K | undefined, handler: Handler<K>): Subscription {
    const registry: MessageRegistry = type === undefined ? {} : { [type]: messages[type] };
    return bus.subscribe(where.subject, (msg) => this.#handle(where.verb, registry, handler as Handler<MessageType>, msg));
  }

  async #handle(verb: string, registry: MessageRegistry, handler: Handler<MessageType>, msg: BusMsg): Promise<void> {
    let value: unknown;
    try {
      if (this.opts.mayRequest && !this.opts.mayRequest(verb, msg.reply)) throw new RoleRefusedError(verb, msg.reply);
      const { body } = decode(msg.data, { registry, maxBytes: this.opts.maxBytes });
      value = await handler(body as MessageBody<MessageType>, msg);
    } catch (err) {
      if (err instanceof ProtocolError || err instanceof CodeSourceRefusedError || err instanceof NodeNotOwnedError || err instanceof JobNotOwnedError || err instanceof RoleRefusedError) this.#refused(verb, msg, err);
      else if (!(err instanceof OrreryError)) this.opts.log(`${verb} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      this.#respond(verb, msg, () => this.#encodeError(err));
      return;
    }
    this.#respond(verb, msg, () => encodeOk(value ?? null));
  }

  #refused(verb: string, msg: BusMsg, err: ProtocolError | CodeSourceRefusedError | NodeNotOwnedError | JobNotOwnedError | RoleRefusedError): void {
    this.#total++;
    this.#byCode.set(err.code, (this.#byCode.get(err.code) ?? 0) + 1);
    this.#byVerb.set(verb, (this.#byVerb.get(verb) ?? 0) + 1);
    this.#rejections.note(err.code, `refused a message on ${msg.subject}: ${err.code}: ${err.message}`);
  }

  #encodeError(err: unknown): Uint8Array {
    try {
      return encodeError(err);
    } catch {
      // the error's detail does not encode (or is too large): keep the code and message only
      const code = err instanceof OrreryError ? err.code : WireErrorCode.INTERNAL;
      return encodeError(new OrreryError(code, err instanceof Error ? err.message.slice(0, 4000) : 'internal error'));
    }
  }

  /** Answers when there is a reply subject; an answer too large to encode goes back as its error. */
  #respond(verb: string, msg: BusMsg, reply: () => Uint8Array): void {
    if (msg.reply === undefined) return;
    try {
      let bytes: Uint8Array;
      try {
        bytes = reply();
      } catch (err) {
        this.opts.log(`cannot encode the answer to ${verb}: ${err instanceof Error ? err.message : String(err)}`);
        bytes = this.#encodeError(err);
      }
      msg.respond(bytes);
    } catch (err) {
      this.opts.log(`cannot answer ${verb}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

/**
 * Ids become subject tokens (`raylet.<nodeId>.…`, `actor.<actorId>.call`), so one that cannot be a
 * token is a malformed message, refused before anything changes.
 */
export function tokenField(field: string, value: string): string {
  try {
    return assertToken(field, value);
  } catch {
    throw new ProtocolError('INVALID_MESSAGE', `${field}: must be a subject token (no '.', '*', '>' or whitespace)`, { detail: { path: field, value } });
  }
}
