import { redactAddress } from '../auth/credentials.ts';
import { ConnectionFailedError } from '../bus/errors.ts';
import { GcsUnavailableError } from '../client/errors.ts';
import { OrreryError } from '../../lib/errors.ts';
import { CONNECT_WAIT_FLAG, connectWaitFlag, type NatsAccess } from '../process/flags.ts';
import { UsageError, stringFlag } from './args.ts';
import { withCluster } from './connection.ts';
import type { CliIo } from './io.ts';

/**
 * Whether a cluster's GCS answers, for `orrery start` and `orrery up` — and, with --connect-wait,
 * the same asked again while the NATS server (or the GCS a joining node needs) does not answer yet.
 */

/** Whether a GCS answers for `cluster`; an unreachable server is an error naming the address. */
export async function gcsAnswers(address: string, cluster: string, access: NatsAccess): Promise<boolean> {
  return withCluster(address, cluster, async (client) => {
    try {
      await client.nodes();
      return true;
    } catch (err) {
      if (err instanceof GcsUnavailableError) return false;
      // a node's credentials may not list nodes: its raylet's registration will tell
      if (err instanceof OrreryError && err.code === 'PERMISSION_DENIED') return true;
      throw err;
    }
  }, access);
}

/** --connect-wait (else $ORRERY_CONNECT_WAIT), checked as the processes will check it. */
export function connectWaitOf(args: Parameters<typeof stringFlag>[0], env: NodeJS.ProcessEnv): number {
  const text = stringFlag(args, 'connect-wait');
  try {
    return connectWaitFlag(new Map(text === undefined ? [] : [[CONNECT_WAIT_FLAG, text]]), env);
  } catch (err) {
    throw new UsageError(`start: ${(err as Error).message}`, '--connect-wait');
  }
}

/**
 * gcsAnswers, asked again for up to `waitSeconds` while the NATS server does not answer — or, when
 * a GCS is `wanted` (a node joining), while none answers — with one line on stderr saying what it
 * waits for. A server that answers and refuses, or a GCS found when none is wanted, ends it at once.
 */
export async function gcsAnswersWithin(waitSeconds: number, address: string, cluster: string, access: NatsAccess, opts: { wanted: boolean; io: CliIo }): Promise<boolean> {
  const deadline = Date.now() + waitSeconds * 1000;
  let said: string | undefined;
  for (let pauseMs = 250; ; pauseMs = Math.min(pauseMs * 2, 2000)) {
    let waitingFor: string;
    try {
      const runs = await gcsAnswers(address, cluster, access);
      if (runs || !opts.wanted) return runs;
      waitingFor = `the GCS of cluster ${JSON.stringify(cluster)}`;
    } catch (err) {
      if (!(err instanceof ConnectionFailedError && err.transient)) throw err;
      if (Date.now() >= deadline) throw err;
      waitingFor = `the NATS server at ${redactAddress(address)}`;
    }
    if (Date.now() >= deadline) return false;
    if (said !== waitingFor) opts.io.err(`orrery start: waiting up to ${waitSeconds} s for ${waitingFor} (--connect-wait)`);
    said = waitingFor;
    await new Promise((resolve) => setTimeout(resolve, Math.min(pauseMs, Math.max(0, deadline - Date.now()))));
  }
}

