// For specs that freeze or kill the GCS process a local cluster started below this one.
import { readFileSync } from 'node:fs';
import { descendants } from '../../runtime/local/process-tree.ts';

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
}

/** The pid of the GCS process below this one (runtime/gcs/main), or undefined when there is none. */
export function gcsPid(): number | undefined {
  return descendants(process.pid).find((pid) => /gcs[/\\]main\.(ts|js)/.test(commandLine(pid)));
}
