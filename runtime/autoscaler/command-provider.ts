import { spawn } from 'node:child_process';
import { OrreryError } from '../../lib/errors.ts';
import { launchEnv, type LaunchedNode, type LaunchRequest, type NodeProvider, type ProvidedNode } from './provider.ts';

/** At most this much of a list command's output is read. */
const MAX_LIST_BYTES = 1 << 20;
const NODE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,255}$/;

/**
 * The `command` provider: runs the configured shell commands — how a user wires a cloud CLI, Docker
 * or a VM manager. `launch` gets the node's type, name, labels, taints, resources and the join
 * address in ORRERY_* variables (docs/autoscaling.md), and ORRERY_START_ARGS, the `orrery start`
 * flags that make the node what its type says; the node counts as launched once its raylet
 * registers under ORRERY_NODE_NAME. `terminate` gets the name and, once known, ORRERY_NODE_ID.
 * A command that exits non-zero or outlives `timeoutSeconds` is a failure, reported with the last
 * line it wrote on stderr. The optional `list` prints the machines it runs for the cluster, one
 * `NAME [LAUNCHED-AT]` per line (LAUNCHED-AT: an ISO 8601 time or seconds since the epoch), so that
 * an autoscaler started again takes over the launches an earlier one left in flight.
 */
export class CommandProvider implements NodeProvider {
  readonly kind = 'command';
  readonly launched?: () => Promise<LaunchedNode[]>;

  constructor(private readonly opts: { launch: string; terminate: string; list?: string; timeoutSeconds: number; address: string; cluster: string; env?: NodeJS.ProcessEnv }) {
    const list = opts.list;
    if (list !== undefined) this.launched = async () => parseList(await this.#run('list', list, { ORRERY_ADDRESS: opts.address, ORRERY_CLUSTER: opts.cluster }));
  }

  async launch(req: LaunchRequest): Promise<void> {
    await this.#run('launch', this.opts.launch, launchEnv(req));
  }

  async terminate(node: ProvidedNode): Promise<void> {
    await this.#run('terminate', this.opts.terminate, launchEnv({ ...node, address: this.opts.address, cluster: this.opts.cluster }));
  }

  async close(): Promise<void> {}

  /** Resolves with what the command printed on stdout (the first MiB). */
  #run(what: string, command: string, vars: Record<string, string>): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn('/bin/sh', ['-c', command], { env: { ...(this.opts.env ?? process.env), ...vars }, stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      const out: Buffer[] = [];
      let outBytes = 0;
      child.stdout!.on('data', (chunk: Buffer) => {
        if (outBytes >= MAX_LIST_BYTES) return;
        out.push(chunk);
        outBytes += chunk.length;
      });
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
        if (code === 0) return resolve(Buffer.concat(out).subarray(0, MAX_LIST_BYTES).toString('utf8'));
        const last = err.trim().split('\n').pop()?.trim();
        const how = sig ? `was killed (${sig}${sig === 'SIGKILL' ? `, after ${this.opts.timeoutSeconds} s` : ''})` : `exited with code ${code}`;
        reject(new OrreryError('PROVIDER_FAILED', `the ${what} command ${how}${last ? `: ${last}` : ''}`, { detail: { code, signal: sig } }));
      });
    });
  }
}

/**
 * A list command's output: one `NAME [LAUNCHED-AT]` per line; blank lines and `#` comments are
 * skipped. Anything else fails the listing, naming the line, rather than be guessed at.
 */
export function parseList(text: string): LaunchedNode[] {
  const nodes: LaunchedNode[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const [name, at, ...rest] = line.split(/\s+/);
    const bad = (why: string): never => {
      throw new OrreryError('PROVIDER_FAILED', `the list command's line ${i + 1} (${JSON.stringify(line.slice(0, 200))}): ${why}; expected NAME [LAUNCHED-AT]`);
    };
    if (!NODE_NAME.test(name)) bad('not a node name');
    if (rest.length > 0) bad('more than two fields');
    if (at === undefined) return void nodes.push({ nodeName: name });
    const since = /^\d+(\.\d+)?$/.test(at) ? Number(at) * 1000 : Date.parse(at);
    if (!Number.isFinite(since)) bad(`${JSON.stringify(at)} is neither an ISO 8601 time nor seconds since the epoch`);
    nodes.push({ nodeName: name, since });
  });
  return nodes;
}
