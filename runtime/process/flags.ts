import { OrreryError } from '../../lib/errors.ts';
import { DEFAULT_ADDRESS } from '../bus/address.ts';

export { DEFAULT_ADDRESS };

/** A command-line flag or its value is unusable; the message is the one line the user sees. */
export class FlagError extends OrreryError {
  override name = 'FlagError';
  constructor(readonly flag: string, readonly problem: string) {
    super('INVALID_FLAG', `${flag}: ${problem}`, { detail: { flag, problem } });
  }
}

/**
 * The flags of a process (the GCS, a raylet): `--flag value` or `--flag=value`, each at most once,
 * each one of `valueFlags`; `--help`/`-h` anywhere. Every problem is a FlagError naming its flag.
 */
export function scanFlags(argv: readonly string[], valueFlags: ReadonlySet<string>): { given: Map<string, string>; help: boolean } {
  const given = new Map<string, string>();
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      help = true;
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    if (!valueFlags.has(flag)) throw new FlagError(flag, arg.startsWith('-') ? 'unknown flag' : 'unexpected argument');
    let value: string | undefined;
    if (flag !== arg) value = arg.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) value = argv[++i];
    if (value === undefined) throw new FlagError(flag, 'needs a value');
    if (given.has(flag)) throw new FlagError(flag, 'given more than once');
    given.set(flag, value);
  }
  return { given, help };
}

/** `--address`, else $ORRERY_ADDRESS, else the local default; an empty one is a FlagError. */
export function addressFlag(given: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv): string {
  const address = (given.get('--address') ?? (env.ORRERY_ADDRESS?.trim() || DEFAULT_ADDRESS)).trim();
  if (address === '') throw new FlagError('--address', 'must not be empty');
  return address;
}
