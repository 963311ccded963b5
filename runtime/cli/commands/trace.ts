import { createInterface } from 'node:readline';
import { OrreryError } from '../../../lib/errors.ts';
import { MACHINE_KINDS, type InspectRecord, type MachineKind } from '../../../protocols/messages/inspect.ts';
import type { Bus } from '../../bus/bus.ts';
import { connectNatsBus } from '../../bus/nats-connect.ts';
import { recordTrace } from '../../inspect/recorder.ts';
import { filterRecords, formatContext, formatRecord } from '../../inspect/replay.ts';
import { readTrace } from '../../inspect/trace-file.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf } from '../connection.ts';
import type { CliIo } from '../io.ts';

const RECORD_FLAGS = { out: 'string', address: 'string', cluster: 'string', duration: 'string' } as const;
const REPLAY_FLAGS = { step: 'boolean', machine: 'string', id: 'string', context: 'boolean' } as const;
const CONNECT_TIMEOUT_MS = 3000;
const ACK_TIMEOUT_MS = 2000;

/**
 * `orrery trace record --out FILE [--address URL] [--cluster NAME] [--duration S]`: records the
 * cluster's inspection stream (every machine transition) to a trace file until SIGINT/SIGTERM or
 * `--duration` seconds, then prints how many transitions it recorded.
 *
 * `orrery trace replay FILE [--step] [--machine M] [--id ID] [--context]`: prints the transitions
 * of a trace, one line each (machine, id, event, from → to); with --step one per key press (Enter,
 * space or any key; q quits); --machine and --id (a prefix) narrow it; --context adds each
 * transition's context. docs/inspection.md describes the stream and the file.
 */
export async function trace(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'record') return record(rest, io);
  if (sub === 'replay') return replay(rest, io);
  throw new UsageError(`trace: ${sub === undefined ? 'missing subcommand' : `unknown subcommand ${JSON.stringify(sub)}`} (expected record or replay)`);
}

async function record(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('trace record', argv, RECORD_FLAGS);
  const out = stringFlag(args, 'out');
  if (out === undefined) throw new UsageError('trace record: --out FILE is required (where the trace is written)', '--out');
  const durationText = stringFlag(args, 'duration');
  let durationMs: number | undefined;
  if (durationText !== undefined) {
    const seconds = Number(durationText);
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 86_400) throw new UsageError(`trace record: --duration: expected seconds, a number above 0 and at most 86400, got ${JSON.stringify(durationText)}`, '--duration');
    durationMs = seconds * 1000;
  }
  const address = addressOf('trace record', args, io.env)!;
  const cluster = clusterOf('trace record', args, io.env);

  let bus: Bus;
  try {
    bus = await connectNatsBus({ servers: address, name: 'orrery-trace', connectTimeoutMs: CONNECT_TIMEOUT_MS, ...io.access });
  } catch (err) {
    throw new OrreryError('CONNECTION_FAILED', `trace record: cannot connect to NATS at ${address}: ${err instanceof OrreryError ? String(err.detail.reason ?? err.message) : String(err)}`);
  }
  try {
    let recording;
    try {
      recording = await recordTrace({ bus, cluster, out });
    } catch (err) {
      throw new UsageError(`trace record: --out: cannot write ${out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, '--out');
    }
    const answered = await recording.ready(ACK_TIMEOUT_MS);
    if (!answered) io.err(`trace record: no GCS or raylet of cluster ${JSON.stringify(cluster)} answered yet; recording whatever comes`);
    io.err(`recording cluster ${JSON.stringify(cluster)} at ${address} to ${out}${durationMs !== undefined ? ` for ${durationText} s` : ''} (Ctrl-C to stop)`);
    const lost = await untilStopped(io, bus, durationMs);
    const { count } = await recording.stop();
    io.out(`recorded ${count} transition${count === 1 ? '' : 's'} to ${out}`);
    if (lost) {
      io.err('trace record: the connection to NATS was lost');
      return 1;
    }
    return 0;
  } finally {
    await bus.close().catch(() => undefined);
  }
}

/** Resolves on SIGINT/SIGTERM, io.signal, or after `durationMs` (false), or when the bus closes (true). */
function untilStopped(io: CliIo, bus: Bus, durationMs: number | undefined): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = (): void => finish(false);
    const finish = (lost: boolean): void => {
      clearTimeout(timer);
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
      io.signal?.removeEventListener('abort', stop);
      resolve(lost);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (io.signal?.aborted) return finish(false);
    io.signal?.addEventListener('abort', stop, { once: true });
    if (durationMs !== undefined) timer = setTimeout(stop, durationMs);
    void bus.closed.then(() => finish(true));
  });
}

async function replay(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('trace replay', argv, REPLAY_FLAGS, 1);
  const file = args.positionals[0];
  if (file === undefined) throw new UsageError('trace replay: missing FILE (a trace written by orrery trace record)');
  const machineText = stringFlag(args, 'machine');
  if (machineText !== undefined && !(MACHINE_KINDS as readonly string[]).includes(machineText)) {
    throw new UsageError(`trace replay: --machine: unknown machine ${JSON.stringify(machineText)} (expected ${MACHINE_KINDS.join(', ')})`, '--machine');
  }
  const id = stringFlag(args, 'id');
  const { header, records: all } = readTrace(file);
  const records = filterRecords(all, { machine: machineText as MachineKind | undefined, id });
  const t0 = header.startedAt;
  const showContext = args.flags.context === true;
  io.out(`trace of cluster ${JSON.stringify(header.cluster)}, recorded ${new Date(header.startedAt).toISOString()}: ${records.length} of ${all.length} transition(s)`);
  const print = (r: InspectRecord): void => {
    io.out(formatRecord(r, t0));
    if (showContext) io.out(`           context ${formatContext(r)}`);
  };
  if (args.flags.step !== true) {
    for (const r of records) print(r);
    return 0;
  }
  return step(records, print, io);
}

/**
 * One transition per key press. On a terminal stdin is read raw: any key steps forward, b (or ←)
 * steps back, ? repeats the help, q quits; Ctrl-C quits with 130, as an interrupted command does.
 * Otherwise each line read is a key (an empty line steps, so a script can drive it), and the end of
 * input quits.
 */
async function step(records: readonly InspectRecord[], print: (r: InspectRecord) => void, io: CliIo): Promise<number> {
  const stdin = process.stdin;
  const tty = stdin.isTTY === true;
  const help = tty ? 'keys: any key next · b or ← back · ? help · q quit' : 'lines: Enter next · b back · ? help · q quit';
  /** How many transitions have been shown: records[shown - 1] is the current one. */
  let shown = 0;
  const show = (): void => {
    print(records[shown - 1]);
    io.err(`[${shown}/${records.length}]`);
  };
  const forward = (): boolean => {
    if (shown >= records.length) return false;
    shown++;
    show();
    return shown < records.length;
  };
  const back = (): void => {
    if (shown <= 1) return void io.err('(at the first transition)');
    shown--;
    show();
  };
  io.err(help);
  if (!forward()) {
    io.err('(end of trace)');
    return 0;
  }
  return new Promise<number>((resolve) => {
    const done = (code = 0): void => {
      cleanup();
      resolve(code);
    };
    /** One key; true when the replay is over. */
    const key = (k: string): boolean => {
      if (k === 'q' || k === '\u001b') return true;
      if (k === 'b' || k === '\u001b[D') return back(), false;
      if (k === '?') return io.err(help), false;
      if (!forward()) {
        io.err('(end of trace)');
        return true;
      }
      return false;
    };
    let cleanup: () => void;
    if (tty) {
      stdin.setRawMode(true);
      stdin.resume();
      const onData = (data: Buffer): void => {
        const k = data.toString();
        if (k === '\u0003') return done(130); // Ctrl-C
        if (key(k)) done();
      };
      stdin.on('data', onData);
      cleanup = () => {
        stdin.off('data', onData);
        stdin.setRawMode(false);
        stdin.pause();
      };
    } else {
      const lines = createInterface({ input: stdin });
      lines.on('line', (line) => {
        if (key(line.trim())) done();
      });
      lines.once('close', done);
      cleanup = () => {
        lines.removeAllListeners();
        lines.close();
        stdin.destroy(); // an open pipe would keep the process alive
      };
    }
  });
}
