import { compileRequest, type PlacementOptions } from '../../lib/scheduling/request.ts';
import type { SchedulingRequest } from '../../lib/scheduling/request.types.ts';
import type { SubmitTask } from '../../protocols/messages/task.ts';
import type { LocalTasksOptions } from './local-tasks-options.ts';

const COMPILED_CACHE = 1024;

/**
 * The scheduling requests of one raylet's task submissions (local-tasks.ts), compiled once per
 * namespace and options and kept (at most COMPILED_CACHE, then afresh): tasks with the same options
 * share one request, so a drain decides them as one (local-tasks.ts, `waits`). Options that cannot be
 * keyed are compiled each time.
 */
export class CompiledRequests {
  readonly #compiled = new Map<string, SchedulingRequest>();

  constructor(private readonly opts: Pick<LocalTasksOptions, 'rareResources'>) {}

  compile(body: SubmitTask): SchedulingRequest {
    let key: string | undefined;
    try {
      key = `${body.namespace}\0${JSON.stringify(body.options)}`;
    } catch {
      key = undefined;
    }
    const cached = key === undefined ? undefined : this.#compiled.get(key);
    if (cached) return cached;
    const req = compileRequest(body.options as PlacementOptions, { namespace: body.namespace, rareResources: this.opts.rareResources() });
    if (key !== undefined) {
      if (this.#compiled.size >= COMPILED_CACHE) this.#compiled.clear();
      this.#compiled.set(key, req);
    }
    return req;
  }
}
