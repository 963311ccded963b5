import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { clusterOf } from '../connection.ts';
import type { CliIo } from '../io.ts';
import { authAdd, authInit } from '../../auth/init.ts';
import { CLIENT_ROLES, ROLES, ROLE_SUMMARY, type ClientRole } from '../../auth/roles.ts';

const FLAGS = { dir: 'string', cluster: 'string', force: 'boolean' } as const;
const ADD_FLAGS = { dir: 'string', role: 'string', name: 'string', force: 'boolean' } as const;
const USAGE = 'expected: orrery auth init --dir DIR, or orrery auth add --dir DIR --role driver|observer|admin --name NAME';

/**
 * `orrery auth init --dir DIR [--cluster NAME] [--force]`: a nats-server configuration with one
 * nkey user per role and their subject permissions, and each role's credentials file (0600).
 * Prints paths and what to do with them; never a seed.
 */
export async function auth(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'add') return add(rest, io);
  if (sub !== 'init') throw new UsageError(`auth: ${sub === undefined ? 'a subcommand is required' : `unknown subcommand ${JSON.stringify(sub)}`} (${USAGE})`);
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

/**
 * `orrery auth add --dir DIR --role driver|observer|admin --name NAME [--force]`: a client user of
 * its own (its own keys and inbox), for one program or person; the configuration is rewritten and
 * the NATS server takes it on a reload.
 */
function add(argv: readonly string[], io: CliIo): number {
  const args = parseArgs('auth add', argv, ADD_FLAGS);
  const dir = stringFlag(args, 'dir');
  if (dir === undefined) throw new UsageError('auth add: --dir is required (the directory orrery auth init wrote)', '--dir');
  const role = stringFlag(args, 'role');
  if (role === undefined || !(CLIENT_ROLES as readonly string[]).includes(role)) {
    throw new UsageError(`auth add: --role must be one of ${CLIENT_ROLES.join(', ')}${role === undefined ? '' : `, not ${JSON.stringify(role)}`}`, '--role');
  }
  const name = stringFlag(args, 'name');
  if (name === undefined) throw new UsageError('auth add: --name is required (the user, e.g. a program or a person)', '--name');
  const added = authAdd({ dir, role: role as ClientRole, name, force: args.flags.force === true });
  io.out(`Wrote ${added.creds} (0600): the ${role} ${JSON.stringify(name)}, with an inbox of its own.`);
  io.out(`Rewrote ${added.config}; reload the NATS server to take it: nats-server --signal reload (or kill -HUP its pid).`);
  return 0;
}
