import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { OrreryError } from '../../lib/errors.ts';
import { KvConflictError, type KeyValue, type KvBucket, type KvValue } from './kv.ts';

/**
 * JetStream KV behind the KeyValue interface (kv.ts). Loaded with a dynamic import by the one
 * process that keeps tables (the GCS), so raylets and worker hosts never load the JetStream client.
 * Buckets keep one value per key (history 1) in file storage, replicated on three servers when the
 * NATS cluster has three or more with JetStream (R3: losing one server loses no record), else on
 * one; `open` fails with JETSTREAM_UNAVAILABLE when the server runs without JetStream.
 */
export async function openJetStreamKv(nc: NatsConnection, opts: { readyTimeoutMs?: number; request?: KvRequest } = {}): Promise<KeyValue> {
  const deadline = Date.now() + (opts.readyTimeoutMs ?? READY_TIMEOUT_MS);
  await untilReady(deadline, () => jetstreamManager(nc, { timeout: 5000 }));
  const kvm = new Kvm(jetstream(nc, { timeout: WRITE_TIMEOUT_MS }));
  return {
    async bucket(name: string): Promise<KvBucket> {
      return new JetStreamBucket(name, await untilReady(Date.now() + (opts.readyTimeoutMs ?? READY_TIMEOUT_MS), () => createReplicated(kvm, name)), opts.request);
    },
  };
}

/**
 * How long a write (or any JetStream request of the buckets) waits for its acknowledgement. nats.js's
 * default is 5 s; a put sent while the stream's leader is being replaced can sit unanswered that long
 * after the new leader already takes writes, and every caller of the GCS waits behind it. Normal
 * puts take milliseconds, so 2 s is still far above one under load; a put that times out is tried
 * again by its owner (kv-store.ts, leader.ts).
 */
export const WRITE_TIMEOUT_MS = 2000;

/** How long JetStream may stay "temporarily unavailable" (a NATS cluster electing its leaders) before opening fails. */
const READY_TIMEOUT_MS = 30_000;

/**
 * Runs `attempt` until it succeeds. A server without JetStream is JETSTREAM_UNAVAILABLE at once (the
 * GCS may then keep its tables in memory). Anything else — a timeout, "JetStream system temporarily
 * unavailable" while a NATS cluster elects a leader after losing a server — is retried until the
 * deadline, then JETSTREAM_NOT_READY: never mistaken for a server without JetStream, which would make
 * a GCS started during the election forget every table the cluster keeps.
 */
async function untilReady<T>(deadline: number, attempt: () => Promise<T>): Promise<T> {
  for (let pause = 100; ; pause = Math.min(pause * 2, 1000)) {
    try {
      return await attempt();
    } catch (err) {
      const code = (err as { api_error?: { err_code?: number } } | null)?.api_error?.err_code;
      if ((err as Error)?.name === 'JetStreamNotEnabled' || code === 10039) {
        throw new OrreryError('JETSTREAM_UNAVAILABLE', `the NATS server has no JetStream (start it with -js): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      const message = err instanceof Error ? err.message : String(err);
      // only what a leader election looks like is waited out — and "no suitable peers for
      // placement" (10005), what a NATS cluster answers an R3 bucket while its JetStream servers are
      // still finding each other; anything else (permissions, a bad name) is an answer, not a pause
      if (code !== 10008 && code !== 10005 && !/time(d)? ?out|temporarily unavailable|no (stream )?leader|quorum|no suitable peers/i.test(message)) throw err;
      if (Date.now() + pause > deadline) {
        throw new OrreryError('JETSTREAM_NOT_READY', `JetStream did not answer in time (a NATS cluster without a leader?): ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

/** Replicas of the GCS's buckets on a NATS cluster that can hold them. */
export const KV_REPLICAS = 3;

/**
 * The bucket with KV_REPLICAS replicas, or with one where the servers cannot hold more: a lone server
 * ("replicas > 1 not supported in non-clustered mode"), a cluster of fewer JetStream servers
 * ("insufficient resources"), or a bucket an earlier GCS made with one replica (a different
 * configuration). Asking is the only test that holds whatever the servers' configuration says.
 */
async function createReplicated(kvm: Kvm, name: string): Promise<KV> {
  try {
    return await kvm.create(name, { history: 1, replicas: KV_REPLICAS });
  } catch (err) {
    const code = (err as { api_error?: { err_code?: number } } | null)?.api_error?.err_code;
    const message = err instanceof Error ? err.message : String(err);
    if (code === 10074 || code === 10023 || code === 10058 || /non-clustered|insufficient resources|already in use/i.test(message)) return kvm.create(name, { history: 1 });
    throw err;
  }
}

/** JetStream's "wrong last sequence" (err_code 10071) is how a failed compare-and-set reads. */
function isConflict(err: unknown): boolean {
  const e = err as { message?: string; api_error?: { err_code?: number } } | null;
  return e?.api_error?.err_code === 10071 || /wrong last sequence|key exists/i.test(e?.message ?? '');
}

/**
 * A write that found no stream leader: nats.js reports JetStream's no-responders as "jetstream is not
 * enabled", which on a NATS cluster means the bucket's stream is electing a leader (the server that
 * led it is gone). Said as what it is; the caller tries again.
 */
function unavailable(bucket: string, err: unknown): unknown {
  if ((err as Error)?.name !== 'JetStreamNotEnabled') return err;
  return new OrreryError('KV_UNAVAILABLE', `no leader of ${bucket}'s stream answered (the NATS cluster is electing one?)`, { cause: err });
}

/** A request on the connection's own multiplexer (NatsBus.request): the reply's bytes. */
export type KvRequest = (subject: string, data: Uint8Array, timeoutMs: number) => Promise<Uint8Array>;

/** What nats.js's KV would say, through its private subject builder; absent in another build of it. */
type KvInternals = { subjectForKey?: (key: string, edit: boolean) => string };
const VALID_KEY = /^[-/=.\w]+$/;

class JetStreamBucket implements KvBucket {
  constructor(readonly name: string, private readonly kv: KV, private readonly request?: KvRequest) {}

  /**
   * A put is a JetStream publish: the record's bytes to the key's subject, answered with a PubAck
   * (`{"stream","seq"}`, or `{"error":…}`). Sent through the bus's own request multiplexer when it
   * has one: nats.js's request() builds an Error with its stack for every request it completes
   * (RequestOne.cancel), 4% of a GCS's CPU creating placement groups (bench:pg) before garbage
   * collection, for what is the GCS's most frequent write. Keys nats.js would refuse, and a build of
   * nats.js without the subject builder, go through its own put.
   */
  async put(key: string, value: Uint8Array): Promise<number> {
    const subject = this.request !== undefined && VALID_KEY.test(key) && !key.startsWith('.') && !key.endsWith('.') ? (this.kv as unknown as KvInternals).subjectForKey?.(key, true) : undefined;
    if (subject === undefined) {
      try {
        return await this.kv.put(key, value);
      } catch (err) {
        throw unavailable(this.name, err);
      }
    }
    let reply: Uint8Array;
    try {
      reply = await this.request!(subject, value, WRITE_TIMEOUT_MS);
    } catch (err) {
      // no responders: the stream has no leader (a NATS cluster electing one), as `unavailable` says
      if ((err as { code?: string } | null)?.code === 'NO_RESPONDERS') throw new OrreryError('KV_UNAVAILABLE', `no leader of ${this.name}'s stream answered (the NATS cluster is electing one?)`, { cause: err });
      throw err;
    }
    let ack: { seq?: unknown; error?: { code?: number; err_code?: number; description?: string } };
    try {
      ack = JSON.parse(new TextDecoder().decode(reply)) as typeof ack;
    } catch (cause) {
      throw new OrreryError('KV_WRITE_FAILED', `${this.name}: the acknowledgement of a put is not JSON`, { cause });
    }
    if (ack.error !== undefined) {
      throw new OrreryError('KV_WRITE_FAILED', `${this.name}: ${ack.error.description ?? 'put refused'} (${ack.error.err_code ?? ack.error.code ?? '?'})`, { detail: { code: ack.error.code ?? null, errCode: ack.error.err_code ?? null } });
    }
    if (typeof ack.seq !== 'number') throw new OrreryError('KV_WRITE_FAILED', `${this.name}: the acknowledgement of a put has no sequence`);
    return ack.seq;
  }

  async create(key: string, value: Uint8Array): Promise<number> {
    try {
      return await this.kv.create(key, value);
    } catch (err) {
      if (isConflict(err)) throw new KvConflictError(key, `key ${key} exists in ${this.name}`);
      throw unavailable(this.name, err);
    }
  }

  async update(key: string, value: Uint8Array, revision: number): Promise<number> {
    try {
      return await this.kv.update(key, value, revision);
    } catch (err) {
      if (isConflict(err)) throw new KvConflictError(key, `key ${key} of ${this.name} is not at revision ${revision}`);
      throw unavailable(this.name, err);
    }
  }

  async get(key: string): Promise<KvValue | undefined> {
    // reads are safe to repeat: they wait out a stream electing a new leader (see untilReady)
    const e = await untilReady(Date.now() + READY_TIMEOUT_MS, () => this.kv.get(key));
    if (!e || e.operation !== 'PUT') return undefined;
    return { value: e.value, revision: e.revision };
  }

  async delete(key: string): Promise<void> {
    try {
      await this.kv.delete(key);
    } catch (err) {
      throw unavailable(this.name, err);
    }
  }

  /**
   * Every key's latest value, through one watcher: the stream's message count says whether there is
   * anything at all, and the watcher marks the last of the values present when it started with
   * `isUpdate` (what comes after it is not read).
   */
  entries(): Promise<Map<string, KvValue>> {
    return untilReady(Date.now() + READY_TIMEOUT_MS, () => this.#entries());
  }

  async #entries(): Promise<Map<string, KvValue>> {
    const out = new Map<string, KvValue>();
    if ((await this.kv.status()).values === 0) return out;
    const watch = await this.kv.watch();
    try {
      for await (const e of watch) {
        if (e.operation === 'PUT') out.set(e.key, { value: e.value, revision: e.revision });
        else out.delete(e.key);
        if (e.isUpdate) break;
      }
    } finally {
      watch.stop();
    }
    return out;
  }
}
