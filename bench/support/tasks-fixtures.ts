// The task the task bench runs: it does nothing, as Ray's single-client task benchmarks do.
import { defineTask } from '../../runtime/index.ts';

export function noop(): null {
  return null;
}
export const Noop = defineTask(import.meta.url, noop);
