import { OrreryError } from '../../lib/errors.ts';
import type { Bus } from '../bus/bus.ts';
import { connectNatsBusWaiting } from '../bus/connect-wait.ts';
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
      const at = redactAddress(address);
      const started = Date.now();
      let waited = false;
      try {
        return await connectNatsBusWaiting(
          { servers: address, name, ...access, onHandlerError: (err) => say(`handler error: ${String(err)}`) },
          {
            waitMs: waitSeconds * 1000,
            onWaiting: (err) => {
              waited = true;
              say(`NATS at ${at} does not answer (${reasonOf(err)}); trying again for up to ${waitSeconds} s (--connect-wait)`);
            },
            onConnected: (ms) => say(`connected to NATS at ${at} after ${(ms / 1000).toFixed(1)} s`),
          },
        );
      } catch (err) {
        return fail(1, `cannot connect to NATS at ${at}: ${reasonOf(err)}${waited ? ` (tried for ${((Date.now() - started) / 1000).toFixed(1)} s)` : ''}`);
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
