import { unknown } from '../../../protocols/validate.ts';
import type { CreateActor } from '../../../protocols/messages/actor.ts';
import { encode } from '../../../protocols/codec.ts';
import { decodeReply } from '../../../protocols/reply.ts';
import { subjects } from '../../../protocols/subjects.ts';
import type { Bus } from '../../../runtime/bus/bus.ts';
import { specializeError } from '../../../runtime/errors.ts';
import { OrreryError } from '../../../lib/errors.ts';
import { FIXTURES_URL } from '../../fixtures/actors.ts';

let nextId = 1;

/** A fresh 16-hex-digit actor id. */
export function actorId(): string {
  return (nextId++).toString(16).padStart(16, '0');
}

/** A create_actor body for a class of spec/fixtures/actors.ts. */
export function createSpec(className: string, over: Partial<CreateActor> & { args?: unknown[]; moduleUrl?: string } = {}): CreateActor {
  const { args = [], moduleUrl = FIXTURES_URL, ...rest } = over;
  return {
    actorId: actorId(),
    code: { moduleUrl, className, args },
    namespace: 'default',
    labels: {},
    resources: {},
    maxConcurrency: 1,
    isolation: 'shared',
    incarnation: 0,
    ...rest,
  };
}

/** Calls an actor the way a client does; remote errors come back as their runtime classes. */
export async function call(bus: Bus, id: string, method: string, ...args: unknown[]): Promise<unknown> {
  const msg = await bus.request(subjects('default').actorCall(id), encode('actor_call', { method, args }), { timeoutMs: 5000 });
  try {
    return decodeReply(msg.data, { value: unknown() });
  } catch (err) {
    throw err instanceof OrreryError ? specializeError(err) : err;
  }
}

/** The error `p` rejects with; fails the spec when it resolves. */
export async function rejection(p: Promise<unknown>): Promise<OrreryError> {
  let value: unknown;
  try {
    value = await p;
  } catch (error) {
    return error as OrreryError;
  }
  throw new Error(`expected a rejection, got ${JSON.stringify(value)}`);
}
