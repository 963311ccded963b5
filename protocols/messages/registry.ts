import type { Infer, Validator } from '../validate.ts';
import { heartbeat, registerNode } from './node.ts';
import { reply } from './reply.ts';
import { viewDelta } from './view.ts';

/** A registry maps each message type (the envelope's `t`) to the validator of its body. */
export type MessageRegistry = Readonly<Record<string, Validator<unknown>>>;

/** Every message type of this protocol version. */
export const messages = {
  register_node: registerNode,
  heartbeat,
  view_delta: viewDelta,
  reply,
} as const satisfies MessageRegistry;

export type Messages = typeof messages;
export type MessageType = keyof Messages;
export type MessageBody<K extends MessageType> = Infer<Messages[K]>;
