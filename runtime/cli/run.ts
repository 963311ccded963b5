import { readFileSync } from 'node:fs';
import { OrreryError } from '../../lib/errors.ts';
import { UsageError } from './args.ts';
import { auth } from './commands/auth.ts';
import { dashboard } from './commands/dashboard.ts';
import { ACCESS_FLAGS, FlagError, accessFlags } from '../process/flags.ts';
import { events } from './commands/events.ts';
import { explain } from './commands/explain.ts';
import { label } from './commands/label.ts';
import { list } from './commands/list.ts';
import { kill } from './commands/kill.ts';
import { start } from './commands/start.ts';
import { status } from './commands/status.ts';
import { stop } from './commands/stop.ts';
import { taint } from './commands/taint.ts';
import { statechart } from './commands/statechart.ts';
import { trace } from './commands/trace.ts';
import { down, up } from './commands/up.ts';
import type { CliIo } from './io.ts';
import { GCS_SETTINGS_USAGE } from './gcs-settings.ts';

const COMMANDS: Record<string, (argv: readonly string[], io: CliIo) => Promise<number>> = { start, stop, up, down, status, list, kill, explain, label, taint, events, dashboard, trace, statechart, auth };
/** Commands that connect to NATS, so take --creds and --tls-* (taken out before their own flags are read). */
const CONNECTING = new Set(['start', 'up', 'down', 'status', 'list', 'kill', 'explain', 'label', 'taint', 'events', 'dashboard', 'trace']);

export const USAGE = `usage:
  orrery start --head [--address URL] [node flags] [--rare-resources GPU,my_rare] [GCS settings] [--cluster NAME] [--block]
  orrery start --address URL [node flags] [--cluster NAME] [--block]
  orrery start --gcs [--address URL] [GCS settings] [--cluster NAME] [--block]   a GCS alone: leader, or hot standby
      node flags: --labels "k=v,k2=v2"  --labels-file FILE.yaml  --taints "k=v[:Effect],…"
                  --resources '{"my_res":2}'  --num-cpus N  --num-gpus N  --node-name NAME
                  --max-queued-tasks N  --max-queued-task-bytes N   (the raylet's task queue; default 100000, 268435456)
${GCS_SETTINGS_USAGE}
      --connect-wait S: wait up to S seconds for a NATS server (and, joining, a GCS) that does not answer
                  yet, rather than fail at once (or ORRERY_CONNECT_WAIT; for machines booting together)
  orrery stop
  orrery up CLUSTER.yaml [--address URL] [--wait S] [GCS settings]   the cluster a config describes: nats-server and
      GCS when none runs, then the autoscaler, which launches each node type's minWorkers (waits up to
      --wait S, default the config's launchTimeoutSeconds); docs/autoscaling.md
  orrery down CLUSTER.yaml [--address URL]   stops the autoscaler, terminates the nodes it launched,
      and the GCS and nats-server if \`orrery up\` started them
  orrery status [--address URL] [--cluster NAME]
  orrery list nodes|actors|placement-groups|jobs [--json | --detail] [--address URL] [--cluster NAME]
      [--filter key=value[,key=value…]] [--limit N] [--watch]
      filter keys: state, node (id or name), name, namespace, class (actors); state, name, node (nodes);
      state, name, namespace, strategy (placement groups); state, host, name, namespace, reason (jobs).
      --watch prints each change until Ctrl-C
  orrery list actors --state ALIVE[,PENDING,…]   only actors in these states (filtered by the GCS)
  orrery kill ACTOR [--namespace NS] [--restart] [--json] [--address URL] [--cluster NAME]
      kills one actor, by id or by name (in --namespace, default "default"); with --restart it
      restarts when its maxRestarts allows. A detached actor lives until killed (docs/jobs.md)
  orrery explain --options '{"numCpus":1,"labelSelector":{"zone":"a"}}' [--namespace NS] [--json]
  orrery explain --placement-group '{"bundles":[{"CPU":1}],"strategy":"PACK"}' [--json]
      where it would be placed now and why not elsewhere, node by node; nothing is created
  orrery label (--node-id ID | --node-name NAME) (--set k=v[,…] | --remove k[,…]) [--json]
  orrery taint (--node-id ID | --node-name NAME | --node-ip IP) (--add k=v[:Effect][,…] | --remove k[,…]) [--json]
      effects: NoSchedule (default), PreferNoSchedule, NoExecute (moves running actors that do not tolerate it)
  orrery events [--follow] [--type T[,T2]] [--json] [--limit N]
  orrery trace record --out FILE [--address URL] [--cluster NAME] [--duration S]
  orrery trace replay FILE [--step] [--machine gcs|node|raylet|actor|placement_group|autoscaler] [--id ID] [--context]
  orrery statechart gcs|node|raylet|actor|placement_group|autoscaler [--out FILE.svg]
  orrery dashboard [--port 8265] [--host 127.0.0.1] [--address URL] [--cluster NAME] [--trace FILE]
                   [--host-name NAME]… [--token-file FILE] [--read-only] [--no-history]
      with a token (--token-file FILE, or ORRERY_DASHBOARD_TOKEN) every request needs it; never put it on the command line
  orrery auth init --dir DIR [--cluster NAME] [--force]
      a nats-server configuration with one user per role, and gcs/node/driver/observer/admin.creds
  orrery auth add --dir DIR --role driver|observer|admin --name NAME [--force]
      a client user of its own (DIR/<role>-<name>.creds, its own inbox); reload nats-server after
  orrery start --head --auth-dir DIR [--listen HOST]   a head on an authenticated server
      (--listen beyond loopback without --auth-dir writes the keys into the run dir)
  orrery CMD --help (or -h, or orrery help CMD)              one command's usage; orrery --version
Every command reads ORRERY_ADDRESS when --address is absent (default nats://127.0.0.1:4222), and
takes --creds FILE (or ORRERY_CREDS) and --tls-ca/--tls-cert/--tls-key FILE for a secured server.
A failure is one line on stderr ending in its stable code, e.g. [NODE_NOT_FOUND]; exit 2 for bad usage, 1 otherwise.`;

/**
 * Runs one command line and returns the exit code: 0 done, 1 failed, 2 bad usage. Every failure is
 * exactly one line on stderr (the first line of the error's message).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--version' || command === '-v' || command === 'version') {
    io.out(`orrery ${packageVersion()}`);
    return 0;
  }
  if (command === undefined || command === '--help' || command === '-h') {
    io.out(USAGE);
    return command === undefined ? 2 : 0;
  }
  // `orrery help start`, `orrery start -h`, `orrery start --help`: that command's lines of the usage
  const helpFor = command === 'help' ? rest[0] : rest.includes('--help') || rest.includes('-h') ? command : undefined;
  if (command === 'help' || helpFor !== undefined) {
    const lines = helpFor === undefined ? undefined : commandUsage(helpFor);
    io.out(lines ?? USAGE);
    return 0;
  }
  try {
    const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!run) throw new UsageError(`unknown command ${JSON.stringify(command)} (expected ${Object.keys(COMMANDS).join(', ')})`);
    if (!CONNECTING.has(command)) return await run(rest, io);
    const { argv: own, access } = takeAccessFlags(command, rest, io.env);
    return await run(own, { ...io, access });
  } catch (err) {
    io.err(`orrery: ${oneLine(err)}`);
    return err instanceof UsageError ? 2 : 1;
  }
}

/** The first line of the message, then the error's stable code: `… [NODE_NOT_FOUND]`. */
function oneLine(err: unknown): string {
  const text = (err instanceof Error ? err.message : String(err)).split('\n')[0].trim();
  return err instanceof OrreryError ? `${text} [${err.code}]` : text;
}

/**
 * The usage lines of one command: those starting `  orrery <command>` and the indented lines under
 * them; undefined for a command the usage does not name.
 */
export function commandUsage(command: string): string | undefined {
  const lines = USAGE.split('\n');
  const out: string[] = [];
  let inside = false;
  for (const line of lines) {
    if (/^ {2}orrery /.test(line)) inside = line.startsWith(`  orrery ${command} `) || line === `  orrery ${command}`;
    else if (!/^ {4,}/.test(line)) inside = false;
    if (inside) out.push(line);
  }
  if (out.length === 0) return undefined;
  return ['usage:', ...out, 'Every command reads ORRERY_ADDRESS when --address is absent; `orrery --help` shows every command.'].join('\n');
}

/** This package's version, from its package.json (beside the source tree, or above dist/). */
function packageVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'orrery' && pkg.version) return pkg.version;
    } catch {
      // not there: the other layout
    }
  }
  return 'unknown';
}

/** --creds and --tls-* out of a command line, checked (each file readable) as a process checks them. */
function takeAccessFlags(command: string, argv: readonly string[], env: NodeJS.ProcessEnv): { argv: string[]; access: ReturnType<typeof accessFlags> } {
  const own: string[] = [];
  const given = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const flag = eq > 0 ? arg.slice(0, eq) : arg;
    if (!ACCESS_FLAGS.includes(flag)) {
      own.push(arg);
      continue;
    }
    const value = eq > 0 ? arg.slice(eq + 1) : argv[i + 1] !== undefined && !argv[i + 1].startsWith('--') ? argv[++i] : undefined;
    if (value === undefined || value === '') throw new UsageError(`${command}: ${flag} needs a value`, flag);
    if (given.has(flag)) throw new UsageError(`${command}: ${flag} is given more than once`, flag);
    given.set(flag, value);
  }
  try {
    return { argv: own, access: accessFlags(given, env) };
  } catch (err) {
    if (err instanceof FlagError) throw new UsageError(`${command}: ${err.message}`, err.flag);
    throw err;
  }
}
