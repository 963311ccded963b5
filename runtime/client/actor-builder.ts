import { actorInfo } from '../../protocols/messages/actor.ts';
import type { ActorClass } from './actor-class.ts';
import { ClientActorHandle, type ActorHandle, type HandleContext } from './actor-handle.ts';
import { CreationWatch } from './actor-watch.ts';
import { actorFromWire } from './from-wire.ts';
import { validateActorOptions, type ActorOptions } from './actor-options.ts';
import { plainDataProblem } from '../../protocols/plain-data.ts';
import { shipCode } from '../code/shipper.ts';
import { newRandomId } from './random-id.ts';
import { ActorArgumentError } from './errors.ts';

/** Defined in errors.ts, which the package entry loads without the client. */
export { ActorArgumentError };

/** `cluster.actor(C).options(o).remote(...args)`. */
export interface ActorBuilder<T, A extends unknown[]> {
  /** A builder with these options merged over the current ones (the class defaults first). */
  options(opts?: ActorOptions): ActorBuilder<T, A>;
  /**
   * Validates the options (typed errors, nothing sent), registers the actor with the GCS and
   * resolves once it is registered, in whatever state (PENDING, SCHEDULED, …): use ready() to wait
   * until it is ALIVE.
   */
  remote(...args: A): Promise<ActorHandle<T>>;
}

/** A fresh actor id: 16 lowercase hex characters, a valid subject token. */
export const newActorId = newRandomId;

export function actorBuilder<T, A extends unknown[]>(
  ctx: HandleContext & { readonly namespace: string },
  cls: ActorClass<T, A>,
  opts: ActorOptions,
): ActorBuilder<T, A> {
  return {
    options: (more = {}) => actorBuilder(ctx, cls, { ...opts, ...more }),
    remote: async (...args: A) => {
      const actorId = newActorId();
      const valid = validateActorOptions(opts, { namespace: ctx.namespace, actorId });
      // the same rule the GCS and the raylet apply again when the request reaches them
      for (let index = 0; index < args.length; index++) {
        const problem = plainDataProblem(args[index]);
        if (problem) throw new ActorArgumentError(cls.className, index, problem.path, problem.problem);
      }
      // the module's code in the cluster's code store when it has one (runtime/code/shipper.ts)
      const moduleUrl = await shipCode(ctx, cls.moduleUrl);
      // follows the actor's events from before it exists, so ready() need not ask the GCS again
      const creation = new CreationWatch((w) => ctx.watchActor(actorId, w));
      const register = (jobId: string | undefined) =>
        ctx.gcs.request(
          'register_actor',
          {
            actorId,
            code: { moduleUrl, className: cls.className, args },
            namespace: valid.namespace,
            name: valid.name,
            options: valid.wire,
            ...(jobId === undefined ? {} : { jobId }),
          },
          actorInfo,
        );
      let info;
      try {
        info = await (ctx.job ? ctx.job.run(register) : register(undefined));
      } catch (err) {
        creation.stop();
        throw err;
      }
      creation.seen(actorFromWire(info));
      return new ClientActorHandle<T>(ctx, actorId, info.namespace, opts.maxTaskRetries ?? 0, creation);
    },
  };
}
