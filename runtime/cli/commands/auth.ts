import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { clusterOf } from '../connection.ts';
import type { CliIo } from '../io.ts';
import { authInit } from '../../auth/init.ts';
import { ROLES, ROLE_SUMMARY } from '../../auth/roles.ts';

const FLAGS = { dir: 'string', cluster: 'string', force: 'boolean' } as const;

/**
 * `orrery auth init --dir DIR [--cluster NAME] [--force]`: a nats-server configuration with one
 * nkey user per role and their subject permissions, and each role's credentials file (0600).
 * Prints paths and what to do with them; never a seed.
 */
export async function auth(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'init') throw new UsageError(`auth: ${sub === undefined ? 'a subcommand is required' : `unknown subcommand ${JSON.stringify(sub)}`} (expected: orrery auth init --dir DIR)`);
  const args = parseArgs('auth init', rest, FLAGS);
  const dir = stringFlag(args, 'dir');
  if (dir === undefined) throw new UsageError('auth init: --dir is required (where the configuration and the credentials files go)', '--dir');
  const cluster = clusterOf('auth init', args, io.env);
  const files = authInit({ dir, cluster, force: args.flags.force === true });
  io.out(`Wrote credentials for cluster ${JSON.stringify(cluster)} to ${files.dir} (directory 0700, files 0600):`);
  io.out(`  ${files.config}   run the NATS server with: nats-server -c ${files.config}`);
  for (const role of ROLES) io.out(`  ${files.creds[role]}   ${ROLE_SUMMARY[role]}`);
  io.out(`Head: orrery start --head --auth-dir ${files.dir}   (or give each process --creds FILE / ORRERY_CREDS)`);
  return 0;
}
