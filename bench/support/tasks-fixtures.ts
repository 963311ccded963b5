// The task the task bench runs with --dev (from source): it does nothing, as Ray's single-client task
// benchmarks do. The default mode runs bench/fixtures/tasks.mjs, the same task importing 'orrery' (→ dist/).
import { defineTask } from '../../runtime/index.ts';

export function noop(): null {
  return null;
}
export const Noop = defineTask(import.meta.url, noop);
