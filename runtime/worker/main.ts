/**
 * A worker host process: forked by a raylet (runtime/raylet/worker-process.ts), it connects its own
 * NATS bus and runs actors in an ActorHost. The raylet drives it over the IPC channel (protocols/ipc.ts).
 * Output of actor code goes to stderr, which the raylet shares with the host; the host exits when
 * the channel to its raylet disconnects.
 */
import { messages } from '../../protocols/messages/registry.ts';
import { toWireError } from '../../protocols/errors.ts';
import { check } from '../../protocols/validate.ts';
import type { Bus } from '../bus/bus.ts';
import { connectNatsBusWaiting } from '../bus/connect-wait.ts';
import { ActorHost } from './host.ts';
import { LeaseWatchdog } from './lease-watchdog.ts';
import { parseRayletToHost, type ActorRequest, type ActorResult, type HostToRaylet, type RayletToHost } from '../../protocols/ipc.ts';
import { TurnBatch } from './turn-batch.ts';
import { RejectionLog } from '../process/rejection-log.ts';
import { STALL_MS } from '../process/stall.ts';
import { TaskRunner, type RunTask } from './task-runner.ts';
import { CodeCache } from '../code/cache.ts';
import { refsFromIpc } from '../../protocols/actor-ref.ts';
import { installWorkerCluster } from './worker-cluster.ts';

const log = (line: string): void => void process.stderr.write(`orrery worker ${process.pid}: ${line}\n`);

if (typeof process.send !== 'function') {
  log('this is the worker host of a raylet, started by the raylet over IPC; it cannot run on its own');
  process.exit(2);
}

let bus: Bus | undefined;
let host: ActorHost | undefined;
let tasks: TaskRunner | undefined;
let exiting = false;
/** The raylet's fence as this host follows it; armed by the first lease the raylet grants. */
let watchdog: LeaseWatchdog | undefined;

function follow(lease: Extract<RayletToHost, { type: 'renew' | 'fence' }>): void {
  watchdog ??= new LeaseWatchdog({
    onExpire: (lateMs) => {
      // a host held by its own code sees its lease end late; say so, or an operator looks for a raylet fault
      const held = lateMs >= STALL_MS ? ` (noticed ${Math.round(lateMs)} ms after the lease ended: this host's event loop was held, e.g. by a constructor or method that does not yield; a renewal that arrived meanwhile lifts the fence at once)` : '';
      log(`fenced: no lease from the raylet; actors stop answering calls${held}`);
      host?.fence();
    },
    onRenew: () => {
      log('lease renewed: actors answer calls again');
      host?.unfence();
    },
  });
  watchdog.apply(lease);
}

function send(message: HostToRaylet, then?: () => void): void {
  if (process.connected) process.send!(message, undefined, {}, () => then?.());
  else then?.();
}

/** How long the results wait for the server to confirm this turn's subscriptions before they go anyway. */
const SUBSCRIBED_WAIT_MS = 1_000;

/**
 * How long a host started while its raylet's NATS server is away (a restart, a blip) keeps trying to
 * connect, rather than fail the create it was started for: its raylet rides the outage out on its own
 * connection, and waits 30 s for a host to be ready (worker-process.ts), so this stays below that.
 */
const CONNECT_WAIT_MS = 20_000;

/**
 * The answers to creates and kills of one turn, in one message (protocols/ipc.ts) — sent once the
 * NATS server has the turn's SUB and UNSUB (a flush: PING, PONG): the raylet reports an actor ALIVE,
 * and a caller calls it, only after that. Sent at once, a caller that heard of a new incarnation
 * could reach the server before the host's UNSUB of the old one: the server delivered its call to
 * the old subscription, the host's client dropped it, and the call waited out its timeout
 * (raylet.spec, under load). Batches keep their order: flushes complete in order.
 */
const results = new TurnBatch<ActorResult>((list) => {
  const deliver = (): void => send({ type: 'results', results: list });
  if (bus === undefined) return deliver();
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, SUBSCRIBED_WAIT_MS)));
  void Promise.race([bus.flush().catch(() => undefined), waited]).then(() => {
    clearTimeout(timer);
    deliver();
  });
});

async function init(message: Extract<RayletToHost, { type: 'init' }>): Promise<void> {
  if (bus) return;
  if (message.lease) follow(message.lease);
  try {
    bus = await connectNatsBusWaiting(
      { servers: message.natsAddress, ...message.natsAccess, name: `orrery-worker-${message.node.nodeId}-${process.pid}`, onHandlerError: (err) => log(`handler error: ${String(err)}`) },
      {
        waitMs: CONNECT_WAIT_MS,
        onWaiting: (err) => log(`NATS does not answer (${String(err.detail.reason)}); trying again for up to ${CONNECT_WAIT_MS / 1000} s`),
        onConnected: (ms) => log(`connected to NATS after ${(ms / 1000).toFixed(1)} s`),
      },
    );
  } catch (err) {
    exiting = true;
    send({ type: 'failed', message: err instanceof Error ? err.message : String(err) }, () => process.exit(1));
    return;
  }
  // shipped code (orrery-code:) is fetched into this node's cache: runtime/code/cache.ts
  const codeSources = { roots: message.codeRoots ?? [], shipped: new CodeCache({ bus, cluster: message.cluster, log }) };
  // connect() inside actors and tasks, and the handles they receive, use this host's connection
  const workerCluster = installWorkerCluster({ bus, cluster: message.cluster, address: message.natsAddress });
  host = new ActorHost({ bus, cluster: message.cluster, node: message.node, log, codeSources, workerCluster });
  if (watchdog && !watchdog.live) host.fence();
  tasks = new TaskRunner({ bus, node: message.node, cluster: message.cluster, onLeaseEnded: leaseEnded, log, codeSources, workerCluster });
  send({ type: 'ready', pid: process.pid });
}

async function create(id: number, body: unknown): Promise<void> {
  try {
    if (!host) throw new Error('create before init');
    await host.create(check(messages.create_actor, body));
    results.push({ id, ok: true });
  } catch (err) {
    results.push({ id, ok: false, error: toWireError(err) });
  }
}

/** A raylet's creates and kills, handled in the order it made them. */
function requests(list: readonly ActorRequest[]): void {
  for (const r of list) {
    if (r.type === 'create') void create(r.id, r.actor);
    else results.push({ id: r.id, ok: true, value: host?.kill(r.actorId) ?? false });
  }
}

let ended: number[] = [];
let endedLeases: string[] = [];
let flushing = false;

/** Runs a task and answers its driver; the raylet hears it ended once the turn's answers are out. */
async function task(id: number, body: RunTask): Promise<void> {
  if (tasks) await tasks.run(body);
  ended.push(id);
  flushLater();
}

function leaseEnded(leaseId: string): void {
  endedLeases.push(leaseId);
  flushLater();
}

function flushLater(): void {
  if (flushing) return;
  flushing = true;
  setImmediate(() => {
    flushing = false;
    const ids = ended;
    const leases = endedLeases;
    ended = [];
    endedLeases = [];
    send(leases.length > 0 ? { type: 'ended', ids, leases } : { type: 'ended', ids });
  });
}

async function exit(code: number): Promise<void> {
  if (exiting) return;
  exiting = true;
  watchdog?.stop();
  host?.stop();
  tasks?.stop();
  await bus?.close().catch(() => undefined);
  process.exit(code);
}

const refusedIpc = new RejectionLog('worker host IPC', log);

process.on('message', (raw: unknown) => {
  let message: RayletToHost;
  try {
    const type = (raw as { type?: unknown } | null)?.type;
    // actor references in arguments came across in the channel's own form (actor-ref.ts)
    message = parseRayletToHost(type === 'requests' || type === 'tasks' ? refsFromIpc(raw) : raw);
  } catch (err) {
    // never acted on: the raylet checked what it passes on, so this is a bug or a version skew
    return refusedIpc.note('INVALID_MESSAGE', `refused an IPC message from the raylet: ${err instanceof Error ? err.message : String(err)}`);
  }
  switch (message.type) {
    case 'init':
      return void init(message);
    case 'requests':
      return requests(message.requests);
    case 'tasks':
      for (const t of message.tasks) void task(t.id, t.task);
      return;
    case 'revoke':
      return tasks?.leases.revoke(message.leaseIds);
    case 'cancel':
      for (const taskId of message.taskIds) tasks?.cancelRunning(taskId);
      return;
    case 'renew':
    case 'fence':
      return follow(message);
    case 'exit':
      return void exit(0);
  }
});

// The raylet is gone (it exited or was killed): nobody may reach these actors any more.
process.on('disconnect', () => {
  if (!exiting) process.exit(0);
});

// An actor's stray rejected promise must not take every other actor of the host down with it.
process.on('unhandledRejection', (reason) => log(`unhandled rejection in actor code: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
