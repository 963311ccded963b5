import { spawn } from 'node:child_process';
import { OrreryError } from '../../lib/errors.ts';
import { launchEnv, type LaunchRequest, type NodeProvider, type ProvidedNode } from './provider.ts';

/**
 * The `command` provider: runs the configured shell commands — how a user wires a cloud CLI, Docker
 * or a VM manager. `launch` gets the node's type, name, labels, taints, resources and the join
 * address in ORRERY_* variables (docs/autoscaling.md), and ORRERY_START_ARGS, the `orrery start`
 * flags that make the node what its type says; the node counts as launched once its raylet
 * registers under ORRERY_NODE_NAME. `terminate` gets the name and, once known, ORRERY_NODE_ID.
 * A command that exits non-zero or outlives `timeoutSeconds` is a failure, reported with the last
 * line it wrote on stderr.
 */
export class CommandProvider implements NodeProvider {
  readonly kind = 'command';

  constructor(private readonly opts: { launch: string; terminate: string; timeoutSeconds: number; address: string; cluster: string; env?: NodeJS.ProcessEnv }) {}

  launch(req: LaunchRequest): Promise<void> {
    return this.#run('launch', this.opts.launch, launchEnv(req));
  }

  terminate(node: ProvidedNode): Promise<void> {
    return this.#run('terminate', this.opts.terminate, launchEnv({ ...node, address: this.opts.address, cluster: this.opts.cluster }));
  }

  async close(): Promise<void> {}

  #run(what: string, command: string, vars: Record<string, string>): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', command], { env: { ...(this.opts.env ?? process.env), ...vars }, stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        err = (err + chunk.toString('utf8')).slice(-4096);
      });
      const timer = setTimeout(() => child.kill('SIGKILL'), this.opts.timeoutSeconds * 1000);
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(new OrreryError('PROVIDER_FAILED', `the ${what} command could not run: ${e.message}`));
      });
      child.once('exit', (code, sig) => {
        clearTimeout(timer);
        if (code === 0) return resolve();
        const last = err.trim().split('\n').pop()?.trim();
        const how = sig ? `was killed (${sig}${sig === 'SIGKILL' ? `, after ${this.opts.timeoutSeconds} s` : ''})` : `exited with code ${code}`;
        reject(new OrreryError('PROVIDER_FAILED', `the ${what} command ${how}${last ? `: ${last}` : ''}`, { detail: { code, signal: sig } }));
      });
    });
  }
}
