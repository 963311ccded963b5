import { writeFileSync } from 'node:fs';
import { MACHINE_TYPES, renderStatechart, type MachineType } from '../../inspect/statechart.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import type { CliIo } from '../io.ts';

/**
 * `orrery statechart <machine> [--out FILE]`: the machine's statechart as a standalone SVG (laid
 * out offline with elkjs), on stdout or written to FILE. Machines: gcs, node, raylet, actor,
 * placement_group.
 */
export async function statechart(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('statechart', argv, { out: 'string' }, 1);
  const name = args.positionals[0];
  if (name === undefined) throw new UsageError(`statechart: missing machine (expected ${MACHINE_TYPES.join(', ')})`);
  const machine = name.replace(/-/g, '_');
  if (!(MACHINE_TYPES as readonly string[]).includes(machine)) throw new UsageError(`statechart: unknown machine ${JSON.stringify(name)} (expected ${MACHINE_TYPES.join(', ')})`);
  const svg = renderStatechart(machine as MachineType);
  const out = stringFlag(args, 'out');
  if (out === undefined) {
    io.out(svg.trimEnd());
    return 0;
  }
  try {
    writeFileSync(out, svg);
  } catch (err) {
    throw new UsageError(`statechart: --out: cannot write ${out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, '--out');
  }
  io.err(`wrote the ${machine} statechart to ${out}`);
  return 0;
}
