import { OrreryError } from '../../lib/errors.ts';
import { UsageError } from './args.ts';
import { dashboard } from './commands/dashboard.ts';
import { events } from './commands/events.ts';
import { label } from './commands/label.ts';
import { list } from './commands/list.ts';
import { start } from './commands/start.ts';
import { status } from './commands/status.ts';
import { stop } from './commands/stop.ts';
import { taint } from './commands/taint.ts';
import { statechart } from './commands/statechart.ts';
import { trace } from './commands/trace.ts';
import type { CliIo } from './io.ts';

const COMMANDS: Record<string, (argv: readonly string[], io: CliIo) => Promise<number>> = { start, stop, status, list, label, taint, events, dashboard, trace, statechart };

export const USAGE = `usage:
  orrery start --head [--address URL] [node flags] [--rare-resources GPU,my_rare] [--cluster NAME] [--block]
  orrery start --address URL [node flags] [--cluster NAME] [--block]
  orrery start --gcs [--address URL] [--cluster NAME] [--block]   a GCS alone: leader, or hot standby
      node flags: --labels "k=v,k2=v2"  --labels-file FILE.yaml  --taints "k=v[:Effect],…"
                  --resources '{"my_res":2}'  --num-cpus N  --num-gpus N  --node-name NAME
  orrery stop
  orrery status [--address URL] [--cluster NAME]
  orrery list nodes|actors|placement-groups [--json] [--address URL] [--cluster NAME]
  orrery list actors --state ALIVE[,PENDING,…]   only actors in these states
  orrery label (--node-id ID | --node-name NAME) (--set k=v[,…] | --remove k[,…]) [--json]
  orrery taint (--node-id ID | --node-name NAME | --node-ip IP) (--add k=v[:Effect][,…] | --remove k[,…]) [--json]
      effects: NoSchedule (default), PreferNoSchedule, NoExecute (moves running actors that do not tolerate it)
  orrery events [--follow] [--type T[,T2]] [--json] [--limit N]
  orrery trace record --out FILE [--address URL] [--cluster NAME] [--duration S]
  orrery trace replay FILE [--step] [--machine gcs|node|raylet|actor|placement_group] [--id ID] [--context]
  orrery statechart gcs|node|raylet|actor|placement_group [--out FILE.svg]
  orrery dashboard [--port 8265] [--host 127.0.0.1] [--address URL] [--cluster NAME] [--trace FILE]
Every command reads ORRERY_ADDRESS when --address is absent (default nats://127.0.0.1:4222).
A failure is one line on stderr ending in its stable code, e.g. [NODE_NOT_FOUND]; exit 2 for bad usage, 1 otherwise.`;

/**
 * Runs one command line and returns the exit code: 0 done, 1 failed, 2 bad usage. Every failure is
 * exactly one line on stderr (the first line of the error's message).
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h' || rest.includes('--help')) {
    io.out(USAGE);
    return command === undefined ? 2 : 0;
  }
  try {
    const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
    if (!run) throw new UsageError(`unknown command ${JSON.stringify(command)} (expected ${Object.keys(COMMANDS).join(', ')})`);
    return await run(rest, io);
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
