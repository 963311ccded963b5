/**
 * Reporting for benches (scheduler, and later e2e, tasks, placement groups): command-line flags,
 * aligned text tables, targets checked against measurements, and the machine-readable JSON line.
 *
 * With `--json`, the last line a bench prints is one JSON array of rows, so CI can read it with
 * `tail -n 1`. Every row that carries a target says whether it was met; a target is never adjusted
 * to fit a measurement.
 */
export interface Row {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  /** The same measurement for the reference implementation, when there is one. */
  readonly reference?: number;
  /** value ÷ reference. */
  readonly ratio?: number;
  readonly target?: number;
  readonly met?: boolean;
}

export interface BenchArgs {
  /** Print the rows as one JSON array on the last line. */
  readonly json: boolean;
  /** Shorter time boxes: a smoke run, not a measurement to publish. */
  readonly quick: boolean;
}

export function parseBenchArgs(argv: readonly string[] = process.argv.slice(2)): BenchArgs {
  const known = new Set(['--json', '--quick']);
  const unknown = argv.filter((a) => a !== '--' && !known.has(a));
  if (unknown.length) throw new Error(`unknown argument(s) ${unknown.join(' ')}; expected --json and/or --quick`);
  return { json: argv.includes('--json'), quick: argv.includes('--quick') };
}

/** Which side of the target is good: at least (rates, speed-ups) or at most (costs, growth). */
export type Goal = 'atLeast' | 'atMost';

export function meets(value: number, target: number, goal: Goal): boolean {
  return goal === 'atLeast' ? value >= target : value <= target;
}

/** A row with a target, its verdict filled in. */
export function targetRow(row: Omit<Row, 'target' | 'met'>, target: number, goal: Goal): Row {
  return { ...row, target, met: meets(row.value, target, goal) };
}

/** "met" or "MISSED" with the gap: how far the value is from the target, in percent of the target. */
export function verdict(value: number, target: number, goal: Goal): string {
  if (meets(value, target, goal)) return 'met';
  const gap = goal === 'atLeast' ? (target - value) / target : (value - target) / target;
  return `MISSED (${goal === 'atLeast' ? 'short' : 'over'} by ${(gap * 100).toFixed(1)}%)`;
}

/** 1234567.8 → "1,234,568"; small values keep significant digits ("2.35", "0.412"). */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs >= 100) return Math.round(n).toLocaleString('en-US');
  if (abs >= 10) return n.toFixed(1);
  return n.toFixed(abs >= 1 ? 2 : 3);
}

const NUMERIC = /^(-?[\d,]*(\.\d+)?[×%]?|—)$/;

/** An aligned text table: text columns left, numeric-looking columns right. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => NUMERIC.test(r[i] ?? '')));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** Writes the rows as the final line of output when `--json` was given. */
export function printJsonLast(args: BenchArgs, rows: readonly Row[]): void {
  if (args.json) process.stdout.write(JSON.stringify(rows) + '\n');
}
