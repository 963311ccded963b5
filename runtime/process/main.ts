import { OrreryError } from '../../lib/errors.ts';
import type { Bus } from '../bus/bus.ts';
import { ConnectionFailedError } from '../bus/errors.ts';
import { connectNatsBus } from '../bus/nats.ts';
import { FlagError, type NatsAccess } from './flags.ts';
import { readableByOthers, redactAddress } from '../auth/credentials.ts';

/**
 * What the GCS and raylet entry points share: one-line logs on stderr prefixed with the role, exit
 * codes (2 for a bad flag, 1 for anything else that stops the start), the NATS connection, and a
 * graceful stop on SIGTERM/SIGINT.
 */
export interface ProcessMain {
  say(line: string): void;
  fail(code: number, line: string): never;
  /** The parsed flags; a FlagError exits 2 with its one line; `--help` prints `usage` and exits 0. */
  flags<F extends { help: boolean }>(parse: () => F, usage: string): F;
  /**
   * Connects to NATS at `address`; failure exits 1 with one line naming the address. With
   * `waitSeconds` > 0, a server that does not answer yet is tried again (one line says so) until it
   * does or that time has passed; a server that answers and refuses is not.
   */
  connect(address: string, name: string, access?: NatsAccess, waitSeconds?: number): Promise<Bus>;
  /** Runs `stop` once on SIGTERM or SIGINT, then exits 0; `stopping` says whether it has begun. */
  onSignals(stop: () => Promise<void>): void;
  readonly stopping: boolean;
}

/** Pauses between attempts at a first connection that --connect-wait allows: 250 ms, doubling to 2 s. */
const FIRST_PAUSE_MS = 250;
const MAX_PAUSE_MS = 2000;

export function processMain(role: string): ProcessMain {
  let stopping = false;
  const say = (line: string): void => void process.stderr.write(`orrery ${role}: ${line}\n`);
  const fail = (code: number, line: string): never => {
    say(line);
    process.exit(code);
  };
  return {
    say,
    fail,
    flags(parse, usage) {
      let flags;
      try {
        flags = parse();
      } catch (err) {
        return fail(2, err instanceof FlagError ? err.message : String(err));
      }
      if (flags.help) {
        process.stdout.write(`${usage}\n`);
        process.exit(0);
      }
      return flags;
    },
    async connect(address, name, access = {}, waitSeconds = 0) {
      if (access.creds !== undefined && readableByOthers(access.creds)) say(`warning: ${access.creds} is readable by other users of this machine (chmod 600 it): its key is this process's identity`);
      const reasonOf = (err: unknown): string => (err instanceof OrreryError ? String(err.detail.reason ?? err.message) : String(err));
      const started = Date.now();
      const deadline = started + waitSeconds * 1000;
      let pauseMs = FIRST_PAUSE_MS;
      for (let attempt = 1; ; attempt++) {
        try {
          const bus = await connectNatsBus({ servers: address, name, ...access, ...(attempt > 1 ? { connectTimeoutMs: Math.max(500, Math.min(5000, deadline - Date.now())) } : {}), onHandlerError: (err) => say(`handler error: ${String(err)}`) });
          if (attempt > 1) say(`connected to NATS at ${redactAddress(address)} after ${((Date.now() - started) / 1000).toFixed(1)} s`);
          return bus;
        } catch (err) {
          const left = deadline - Date.now();
          if (!(err instanceof ConnectionFailedError && err.transient) || left <= 0) {
            const waited = attempt > 1 ? ` (tried for ${((Date.now() - started) / 1000).toFixed(1)} s)` : '';
            return fail(1, `cannot connect to NATS at ${redactAddress(address)}: ${reasonOf(err)}${waited}`);
          }
          if (attempt === 1) say(`NATS at ${redactAddress(address)} does not answer (${reasonOf(err)}); trying again for up to ${waitSeconds} s (--connect-wait)`);
          await new Promise((resolve) => setTimeout(resolve, Math.min(pauseMs, left)));
          pauseMs = Math.min(pauseMs * 2, MAX_PAUSE_MS);
        }
      }
    },
    onSignals(stop) {
      const shutdown = async (signal: string): Promise<void> => {
        if (stopping) return;
        stopping = true;
        say(`${signal}: stopping`);
        await stop();
        process.exit(0);
      };
      process.on('SIGTERM', () => void shutdown('SIGTERM'));
      process.on('SIGINT', () => void shutdown('SIGINT'));
    },
    get stopping() {
      return stopping;
    },
  };
}
