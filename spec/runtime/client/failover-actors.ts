// Actor classes for the failover specs (memory and nats). Exported under their own names from this
// module, so worker hosts (in-process or forked) load them by this module's URL.
import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineActor, getRuntimeContext } from '../../../runtime/index.ts';

/** Remembers the calls it received, in order; a new incarnation starts with an empty journal. */
export class Journal {
  private readonly entries: string[] = [];
  append(entry: string): number {
    this.entries.push(entry);
    return this.entries.length;
  }
  /** Recorded on arrival, answered after `ms`. */
  async appendLater(entry: string, ms: number): Promise<number> {
    const n = this.append(entry);
    await new Promise((resolve) => setTimeout(resolve, ms));
    return n;
  }
  /** Recorded on arrival, never answered (and holds no timer that would keep a process alive). */
  appendNeverAnswer(entry: string): Promise<number> {
    this.append(entry);
    return new Promise(() => {});
  }
  journal(): string[] {
    return [...this.entries];
  }
  where(): { nodeId: string; nodeName: string; pid: number } {
    const { nodeId, nodeName } = getRuntimeContext();
    return { nodeId, nodeName, pid: process.pid };
  }
  /** Ends the worker host's process (isolation 'process'), as a crash would. */
  exit(): void {
    setImmediate(() => process.exit(7));
  }
}

export const JournalActor = defineActor(import.meta.url, Journal);

/** One answer of a Tally: its count, and which process and incarnation gave it. */
export interface TallyAnswer {
  count: number;
  pid: number;
  /** Random per construction: tells incarnations apart even within one process. */
  incarnation: string;
  context: ReturnType<typeof getRuntimeContext>;
}

/** Counts the calls it answered; each answer says which process and incarnation answered it. */
export class Tally {
  private count = 0;
  private readonly incarnation = randomUUID();
  bump(): TallyAnswer {
    this.count++;
    return this.peek();
  }
  /** The same answer without counting. */
  peek(): TallyAnswer {
    return { count: this.count, pid: process.pid, incarnation: this.incarnation, context: getRuntimeContext() };
  }
}

export const TallyActor = defineActor(import.meta.url, Tally);

/**
 * A constructor the spec holds at a gate: it writes `<dir>/started`, then runs (synchronously, as a
 * long constructor would) until `<dir>/gate` exists or `maxMs` has passed.
 */
export class GatedStart {
  constructor(dir: string, maxMs = 20_000) {
    writeFileSync(join(dir, 'started'), String(process.pid));
    const end = Date.now() + maxMs;
    while (!existsSync(join(dir, 'gate')) && Date.now() < end) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
  }
  where(): string {
    return getRuntimeContext().nodeId;
  }
}

export const GatedStartActor = defineActor(import.meta.url, GatedStart);

/** As GatedStart, but once `<dir>/gate` exists its constructor throws (a model that fails to load). */
export class GatedFail {
  constructor(dir: string, maxMs = 20_000) {
    new GatedStart(dir, maxMs);
    throw new Error('the gate opened: this constructor fails');
  }
}

export const GatedFailActor = defineActor(import.meta.url, GatedFail);
