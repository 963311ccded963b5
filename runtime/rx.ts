import { createRequire } from 'node:module';
import type * as Rx from 'rxjs';

let loaded: typeof Rx | undefined;

/**
 * rxjs, loaded on first use. Loading it costs ~10 MB of heap, and most processes that import orrery
 * never touch an Observable: a worker host reaches the client's modules through every actor module's
 * `import … from 'orrery'`, and a driver that only creates and calls actors does not follow streams.
 * So the client builds `events$`, `state$` and friends lazily and takes rxjs from here.
 *
 * It is the same rxjs a user's `import … from 'rxjs'` gets: under Node, rxjs's package exports send
 * both `import` and `require` to its CommonJS build, so operators and `instanceof Observable` agree.
 */
export function rx(): typeof Rx {
  return (loaded ??= createRequire(import.meta.url)('rxjs') as typeof Rx);
}
