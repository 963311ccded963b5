// The GCS removes from the code store the chunks no bundle names (runtime/gcs/code-sweep.ts), on a
// real nats-server with JetStream: chunks written as a put cut off midway writes them — one set per
// failed upload, no name — and one under a subject of several tokens, as a careless or hostile driver
// might, go once unchanged for the grace (--code-sweep-ms), while the bundle a driver shipped keeps
// every chunk and is still fetched whole by a raylet that joins after the sweep. The nats-server
// SIGKILLed and restarted while chunks wait for their grace: the sweep goes on and removes them. A
// bundle whose chunks are gone is a creation that fails at once saying so, and the next driver to
// ship it uploads it again, as it does one deleted by hand. The GCS SIGKILLed in the middle of a
// removal: the GCS after it removes the rest. The GCS frozen (SIGSTOP) in the middle of one, past its
// lease, while a standby takes over: woken, it asks for no removal more.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Objm } from '@nats-io/obj';
import { connect as natsConnect, type NatsConnection } from '@nats-io/transport-node';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, defineActor, type Cluster } from '../../runtime/index.ts';
import { codeBucketName, codeStreamName } from '../../protocols/code-store.ts';
import { frozen } from '../helpers/frozen.ts';
import { spawnRuntimeProcess, type RuntimeProcess } from '../../runtime/local/runtime-process.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { until } from '../helpers/until.ts';

const NODE_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url));
const BUCKET = codeBucketName('default');
const STREAM = codeStreamName('default');
const GRACE_MS = 1000;

const work = mkdtempSync(join(tmpdir(), 'orrery-sweep-spec-'));
let server: NatsServerHandle;
let gcs: RuntimeProcess;
/** GCS processes started besides `gcs` (a standby), stopped at the end. */
const others: RuntimeProcess[] = [];
const raylets: RuntimeProcess[] = [];
let client: Cluster;
let nc: NatsConnection;

async function startRaylet(name: string): Promise<void> {
  const args = ['--address', server.url, '--node-name', name, '--labels', `node=${name}`, '--num-cpus', '2'];
  raylets.push(await spawnRuntimeProcess('raylet', args, { env: { ...process.env, ORRERY_CODE_CACHE: join(work, `cache-${name}`) } }));
}

/** Chunk subjects in the store's stream and the messages each holds. */
async function chunkSubjects(): Promise<Record<string, number>> {
  const jsm = await jetstreamManager(nc);
  return (await jsm.streams.info(STREAM, { subjects_filter: `$O.${BUCKET}.C.>` })).state.subjects ?? {};
}

/** Writes `n` chunks under `$O.<bucket>.C.<id>`, each acknowledged by JetStream, and no name: a put cut off midway. */
async function cutOffUpload(id: string, n: number): Promise<void> {
  const js = jetstream(nc);
  for (let i = 0; i < n; i++) await js.publish(`$O.${BUCKET}.C.${id}`, new Uint8Array(1024).fill(i));
}

test.before(async () => {
  server = await startNatsServer({ jetstream: true });
  gcs = await spawnRuntimeProcess('gcs', ['--address', server.url, '--code-sweep-ms', String(GRACE_MS)]);
  await startRaylet('a');
  client = await connect({ address: server.url });
  nc = await natsConnect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
});

test.after(async () => {
  await client?.close();
  await nc?.close();
  await Promise.all(raylets.map((r) => r.stop()));
  for (const p of others) {
    process.kill(p.pid, 'SIGCONT'); // never leave one frozen, whatever failed
    await p.stop();
  }
  await gcs?.stop();
  await server?.stop();
  rmSync(work, { recursive: true, force: true });
});

let Echo: ReturnType<typeof defineActor<{ say(): string }, []>>;
let shippedNuid = '';
let shippedHash = '';

test('the chunks of uploads that never finished go once unchanged for the grace; the shipped bundle keeps every chunk and a raylet that joins afterwards fetches it whole', async () => {
  const project = join(work, 'project');
  mkdirSync(project, { recursive: true });
  symlinkSync(NODE_MODULES, join(project, 'node_modules'), 'junction');
  writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(project, 'echo.ts'), `export class SweepEcho { say(): string { return 'from the store'; } }\n`);
  const url = pathToFileURL(join(project, 'echo.ts')).href;
  const { SweepEcho } = (await import(url)) as { SweepEcho: new () => { say(): string } };
  Echo = defineActor(url, SweepEcho);
  const first = await client.actor(Echo).options({ labelSelector: { node: 'a' } }).remote();
  assert.is((await first.ready({ timeoutMs: 60_000 })).state, 'ALIVE');
  const objects = await (await new Objm(nc).open(BUCKET)).list();
  assert.is(objects.length, 1, 'one bundle shipped');
  shippedNuid = objects[0].nuid;
  shippedHash = objects[0].name;
  const shippedChunks = objects[0].chunks;

  await cutOffUpload('cutoffone', 3);
  await cutOffUpload('cutofftwo', 1);
  await cutOffUpload('hand.written.deep', 2);
  const before = await chunkSubjects();
  assert.is(before[`$O.${BUCKET}.C.cutoffone`], 3);
  assert.is(before[`$O.${BUCKET}.C.hand.written.deep`], 2);

  const after = await until('the unnamed chunks removed', async () => {
    const subjects = await chunkSubjects();
    return Object.keys(subjects).some((s) => !s.endsWith(`.${shippedNuid}`)) ? undefined : subjects;
  });
  assert.equal(after, { [`$O.${BUCKET}.C.${shippedNuid}`]: shippedChunks }, 'only the shipped bundle’s chunks are left, every one');
  // the GCS says what went (its line may follow the removal it reports by a moment)
  await until('the GCS saying what it removed', () => (/code store orrery-code-default: removed \d+ chunk\(s\) of \d+ upload\(s\) that never finished/.test(gcs.recentOutput()) ? true : undefined));

  // a raylet with an empty cache of its own fetches the bundle after the sweep: it is whole
  await startRaylet('b');
  await until('raylet b registered', async () => ((await client.nodes()).some((n) => n.name === 'b' && n.state === 'ALIVE') ? true : undefined));
  const onB = await client.actor(Echo).options({ labelSelector: { node: 'b' } }).remote();
  const info = await onB.ready({ timeoutMs: 60_000 });
  assert.is(info.state, 'ALIVE', info.deathCause);
  assert.is(await onB.call('say'), 'from the store');
});

test('the nats-server SIGKILLed and restarted while unnamed chunks wait for their grace: the sweep goes on after it and removes them', async () => {
  await cutOffUpload('beforekill', 4);
  await server.restart({ downMs: 2 * GRACE_MS });
  await until('the client connection back', async () => (await nc.flush().then(() => true)) || undefined);
  const subjects = await until('the chunks left before the kill removed', async () => {
    const s = await chunkSubjects();
    return s[`$O.${BUCKET}.C.beforekill`] === undefined ? s : undefined;
  }, 60_000);
  assert.ok(subjects[`$O.${BUCKET}.C.${shippedNuid}`] > 0, 'the shipped bundle’s chunks stay');
  // the GCS still serves, and the stored bundle still runs
  const again = await client.actor(Echo).options({ labelSelector: { node: 'a' } }).remote();
  assert.is((await again.ready({ timeoutMs: 60_000 })).state, 'ALIVE');
  assert.is(await again.call('say'), 'from the store');
});

test('a bundle whose chunks are gone (removed by hand): a node that fetches it fails at once with CODE_LOAD_FAILED saying so, not a fetch that never ends; a driver that ships it again mends it', async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.purge(STREAM, { filter: `$O.${BUCKET}.C.${shippedNuid}` });
  await startRaylet('c');
  await until('raylet c registered', async () => ((await client.nodes()).some((n) => n.name === 'c' && n.state === 'ALIVE') ? true : undefined));
  // a message naming the bundle as it is now (as a driver that stored it a moment ago sends it)
  const Named = defineActor(`orrery-code:${shippedHash}/echo.ts`, class SweepEcho {});
  const broken = await client.actor(Named).options({ labelSelector: { node: 'c' } }).remote();
  const dead = await broken.ready({ timeoutMs: 60_000 }).catch(() => broken.info());
  assert.is(dead.state, 'DEAD');
  assert.match(dead.deathCause ?? '', /CODE_LOAD_FAILED|cannot load/);
  assert.match(dead.deathCause ?? '', /not whole: object [0-9a-f]{64} in orrery-code-default is missing \d+ of its \d+ chunk\(s\)/);
  // a driver that ships it anew finds it not whole (has() says no), uploads it again, and it runs there
  const fresh = await connect({ address: server.url });
  try {
    const mended = await fresh.actor(Echo).options({ labelSelector: { node: 'c' } }).remote();
    const info = await mended.ready({ timeoutMs: 60_000 });
    assert.is(info.state, 'ALIVE', info.deathCause);
    assert.is(await mended.call('say'), 'from the store');
  } finally {
    await fresh.close();
  }
});

test('a bundle deleted from the store by hand: the next driver to ship it uploads it again', async () => {
  const store = await new Objm(nc).open(BUCKET);
  const [shipped] = await store.list();
  assert.ok(shipped, 'a bundle in the store');
  await store.delete(shipped.name);
  assert.equal(await store.list(), [], 'deleted');
  const fresh = await connect({ address: server.url });
  try {
    const a = await fresh.actor(Echo).options({ labelSelector: { node: 'a' } }).remote();
    assert.is((await a.ready({ timeoutMs: 60_000 })).state, 'ALIVE');
  } finally {
    await fresh.close();
  }
  assert.equal((await store.list()).map((o) => o.name), [shipped.name], 'uploaded again');
});

/** `n` cut-off uploads of one chunk each, written at once (so most are due at the same look). */
async function cutOffMany(prefix: string, n: number): Promise<void> {
  const js = jetstream(nc);
  await Promise.all(Array.from({ length: n }, (_, i) => js.publish(`$O.${BUCKET}.C.${prefix}${i}`, new Uint8Array(64))));
}

/** How many of the chunk sets named `<prefix><i>` are left. */
async function left(prefix: string): Promise<number> {
  return Object.keys(await chunkSubjects()).filter((subject) => subject.startsWith(`$O.${BUCKET}.C.${prefix}`)).length;
}

/** Resolves once some but not all of `n` sets are gone: the GCS is in the middle of removing them. */
async function midRemoval(prefix: string, n: number): Promise<number> {
  const giveUp = Date.now() + 60_000;
  for (;;) {
    const count = await left(prefix);
    if (count > 0 && count < n) return count;
    if (count === 0) throw new Error(`all ${n} sets were removed before the spec saw the removal under way`);
    if (Date.now() > giveUp) throw new Error('timed out waiting for the removal to begin');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const SETS = 2000;
const gcsArgs = () => ['--address', server.url, '--code-sweep-ms', String(GRACE_MS)];

test('the GCS SIGKILLed in the middle of a removal: the GCS started after it removes the rest, and the shipped bundle still runs', async () => {
  await cutOffMany('killed', SETS);
  const before = await midRemoval('killed', SETS);
  await gcs.crash();
  assert.ok(before > 0, `${before} sets were left when it was killed`);
  gcs = await spawnRuntimeProcess('gcs', gcsArgs());
  await until('the rest removed by the GCS after it', async () => ((await left('killed')) === 0 ? true : undefined), 60_000);
  const store = await new Objm(nc).open(BUCKET);
  const [shipped] = await store.list();
  const subjects = await chunkSubjects();
  assert.is(subjects[`$O.${BUCKET}.C.${shipped.nuid}`], shipped.chunks, 'the shipped bundle keeps every chunk');
  const again = await client.actor(Echo).options({ labelSelector: { node: 'a' } }).remote();
  assert.is((await again.ready({ timeoutMs: 60_000 })).state, 'ALIVE');
  assert.is(await again.call('say'), 'from the store');
});

test('the GCS frozen (SIGSTOP) in the middle of a removal past its lease while a standby takes over: woken, it asks for no removal more and says why', async () => {
  // the standby does not sweep, so every set gone after the takeover would be the old leader's doing
  const standby = await spawnRuntimeProcess('gcs', ['--address', server.url, '--code-sweep-ms', '0']);
  others.push(standby);
  assert.ok(standby.ready.standby, 'the second GCS waits as a standby');
  await cutOffMany('frozen', SETS);
  await midRemoval('frozen', SETS);
  const leader = gcs;
  process.kill(leader.pid, 'SIGSTOP');
  try {
    await until('the leader frozen', () => (frozen(leader.pid) ? true : undefined), 10_000);
    await until('the standby taking over', () => (/holding the leader lease with epoch \d+/.test(standby.recentOutput()) ? true : undefined), 60_000);
    // read once the takeover is done: a removal the server had begun before the freeze has ended
    const atTakeover = await left('frozen');
    assert.ok(atTakeover > 0, 'sets were left when the leader froze');
    // the lines that end a look's removal: stopped partway (its lease gone), or having removed them all
    const ends = () => leader.recentOutput().split('\n').filter((l) => /code store \S+: (removal stopped partway|removed \d+ chunk)/.test(l));
    const endedBefore = ends().length;
    process.kill(leader.pid, 'SIGCONT');
    const said = await until('the woken GCS to end the removal it was in', () => (ends().length > endedBefore ? ends().at(-1) : undefined), 60_000);
    assert.match(said, /removal stopped partway, after \d+ chunk\(s\): this GCS no longer holds its lease/, leader.recentOutput());
    // at most the one purge it had written before it froze, still in its socket's buffer, goes out on waking
    const after = await left('frozen');
    assert.ok(atTakeover - after <= 1, `nothing asked after the lease was gone: ${atTakeover} sets at the takeover, ${after} after`);
  } finally {
    process.kill(leader.pid, 'SIGCONT');
  }
});

test.run();
