import { OrreryError } from '../../lib/errors.ts';

/** A bad command line: the message is one line naming the flag (or argument) and what is wrong. */
export class UsageError extends OrreryError {
  override name = 'UsageError';
  constructor(message: string, readonly flag?: string) {
    super('USAGE', message, { detail: flag === undefined ? {} : { flag } });
  }
}

export type FlagKind = 'string' | 'boolean';
export type FlagSpec = Readonly<Record<string, FlagKind>>;

export interface ParsedArgs {
  readonly flags: Readonly<Record<string, string | true>>;
  readonly positionals: readonly string[];
}

/**
 * Parses `--flag value`, `--flag=value` and boolean `--flag` against `spec` (names without the
 * dashes). Strict: unknown flags, a missing value, a value given to a boolean, a flag given twice and
 * more positionals than `maxPositionals` are UsageErrors. A value may start with one '-' (`-1`, so
 * the range check can name it) but not with '--', which is taken for a forgotten value.
 */
export function parseArgs(command: string, argv: readonly string[], spec: FlagSpec, maxPositionals = 0): ParsedArgs {
  const flags: Record<string, string | true> = {};
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = (eq < 0 ? arg : arg.slice(0, eq)).replace(/^--?/, '');
    const flag = `--${name}`;
    const kind = arg.startsWith('--') ? spec[name] : undefined;
    if (kind === undefined || !Object.hasOwn(spec, name)) {
      const known = Object.keys(spec).map((f) => `--${f}`).join(', ');
      throw new UsageError(`${command}: unknown flag ${arg.startsWith('--') ? flag : arg}${known ? ` (expected ${known})` : ' (it takes no flags)'}`, flag);
    }
    if (Object.hasOwn(flags, name)) throw new UsageError(`${command}: ${flag} is given more than once`, flag);
    if (kind === 'boolean') {
      if (eq >= 0) throw new UsageError(`${command}: ${flag} takes no value`, flag);
      flags[name] = true;
      continue;
    }
    let value: string | undefined;
    if (eq >= 0) value = arg.slice(eq + 1);
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) value = argv[++i];
    if (value === undefined || value === '') throw new UsageError(`${command}: ${flag} needs a value`, flag);
    flags[name] = value;
  }
  if (positionals.length > maxPositionals) {
    throw new UsageError(`${command}: unexpected argument ${JSON.stringify(positionals[maxPositionals])}`);
  }
  return { flags, positionals };
}

/** A string flag's value, or undefined. */
export function stringFlag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags[name];
  return typeof v === 'string' ? v : undefined;
}
