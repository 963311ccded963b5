/**
 * The GCS's settings as `orrery start --head`, `orrery start --gcs` and `orrery up` take them, handed
 * on to the GCS process they start. Before, only `--rare-resources` and `--job-timeout-ms` got through: a user
 * who read of `--node-timeout-ms` or `--create-timeout-ms` in the docs and gave it to `orrery start`
 * was told "unknown flag", and could set it only through the environment.
 *
 * Each is checked here by the GCS's own parser (runtime/gcs/flags.ts), with the same variables
 * ($ORRERY_NODE_TIMEOUT_MS, …) it reads, so a bad value fails at once with one line naming the flag
 * or the variable, rather than as a GCS that exits before it is ready.
 */
import { FlagError, parseGcsFlags } from '../gcs/flags.ts';
import { UsageError, type ParsedArgs } from './args.ts';

/** The settings, by flag name without its dashes; each has the variable ORRERY_<NAME> (upper case, `_` for `-`). */
const SETTINGS = ['heartbeat-ms', 'node-timeout-ms', 'max-dead-actors', 'max-dead-nodes', 'max-removed-groups', 'persist', 'grace-ms', 'lease-ms', 'job-timeout-ms', 'create-timeout-ms', 'code-sweep-ms'] as const;

/** For parseArgs: every setting takes a value; `--no-persist` is `--persist off`. */
export const GCS_SETTING_FLAGS = { ...Object.fromEntries(SETTINGS.map((name) => [name, 'string'])), 'no-persist': 'boolean' } as Record<(typeof SETTINGS)[number], 'string'> & { 'no-persist': 'boolean' };

export const GCS_SETTINGS_USAGE = `      GCS settings (--head and --gcs only; each also read from ORRERY_<NAME>, as ORRERY_NODE_TIMEOUT_MS):
                  --heartbeat-ms N  --node-timeout-ms N  --create-timeout-ms N  --grace-ms N  --lease-ms N
                  --job-timeout-ms N  --max-dead-actors N  --max-dead-nodes N  --max-removed-groups N
                  --persist auto|on|off (--no-persist)  --code-sweep-ms N`;

/**
 * The GCS settings given, as the GCS's own flags; `runsGcs` is whether this command starts a GCS (the
 * head, or --gcs). A setting given to a joining node is a usage error naming it: the cluster's GCS
 * already runs with its own.
 */
export function gcsSettingsOf(args: ParsedArgs, runsGcs: boolean, env: NodeJS.ProcessEnv, command = 'start'): string[] {
  const argv: string[] = [];
  for (const name of SETTINGS) {
    const value = args.flags[name];
    if (typeof value === 'string') argv.push(`--${name}`, value);
  }
  if (args.flags['no-persist'] === true) argv.push('--no-persist');
  if (argv.length > 0 && !runsGcs) {
    throw new UsageError(`${command}: ${argv[0]} is a cluster setting: give it to the head (orrery start --head) or a GCS (--gcs)`, argv[0]);
  }
  if (!runsGcs) return argv;
  // the GCS reads these variables too: a bad one is found here, named, before anything starts
  const variables = Object.fromEntries(SETTINGS.map((name) => `ORRERY_${name.toUpperCase().replace(/-/g, '_')}`).flatMap((v) => (env[v] === undefined ? [] : [[v, env[v]]])));
  try {
    parseGcsFlags(argv, variables);
  } catch (err) {
    if (err instanceof FlagError) throw new UsageError(`${command}: ${err.message}`, err.flag);
    throw err;
  }
  return argv;
}
