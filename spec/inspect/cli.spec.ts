// orrery trace / orrery statechart: bad input is one line naming the flag (exit 2); replay prints a
// trace, filtered, and --step shows one transition per key press.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { InspectRecord } from '../../protocols/messages/inspect.ts';
import { runCli } from '../../runtime/cli/run.ts';
import { traceLine } from '../../runtime/inspect/trace-file.ts';
import { CLI_MAIN } from '../runtime/cli/process.ts';

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env });
  return { code, out, err };
}

const dir = mkdtempSync(join(tmpdir(), 'orrery-trace-cli-'));
const t0 = 1_700_000_000_000;
const rec = (machine: InspectRecord['machine'], id: string, type: string, from: string | null, to: string, context: Record<string, unknown> = {}, dt = 0): InspectRecord =>
  ({ machine, id, seq: dt, time: t0 + dt, event: { type }, from, to, context });
const records = [
  rec('actor', 'aaaa000000000001', 'xstate.init', null, 'PENDING', {}, 1),
  rec('actor', 'aaaa000000000001', 'PLACED', 'PENDING', 'onNode.SCHEDULED', { nodeId: 'n1' }, 2),
  rec('raylet', 'n1', 'xstate.after.heartbeat.raylet.running.waiting', 'running.waiting', 'running.beating', {}, 3),
  rec('actor', 'aaaa000000000001', 'CREATED', 'onNode.SCHEDULED', 'onNode.ALIVE', { nodeId: 'n1' }, 4),
  rec('actor', 'bbbb000000000002', 'xstate.init', null, 'PENDING', {}, 5),
];
const file = join(dir, 'fixture.jsonl');
writeFileSync(file, traceLine({ format: 'orrery-trace', version: 1, cluster: 'c1', startedAt: t0 }) + records.map(traceLine).join(''));

const bad: [string, string[], RegExp][] = [
  ['no subcommand', ['trace'], /trace: missing subcommand \(expected record or replay\)/],
  ['unknown subcommand', ['trace', 'play'], /unknown subcommand "play"/],
  ['record without --out', ['trace', 'record'], /trace record: --out FILE is required/],
  ['record --duration not a number', ['trace', 'record', '--out', join(dir, 'x'), '--duration', 'soon'], /--duration: expected seconds.*"soon"/],
  ['record --duration zero', ['trace', 'record', '--out', join(dir, 'x'), '--duration', '0'], /--duration: expected seconds/],
  ['record bad --address', ['trace', 'record', '--out', join(dir, 'x'), '--address', 'http://x:1'], /--address: .*scheme http/],
  ['record bad --cluster', ['trace', 'record', '--out', join(dir, 'x'), '--cluster', 'a.b'], /--cluster: "a\.b" is not a cluster name/],
  ['record unknown flag', ['trace', 'record', '--out', join(dir, 'x'), '--follow'], /trace record: unknown flag --follow/],
  ['replay without a file', ['trace', 'replay'], /trace replay: missing FILE/],
  ['replay bad --machine', ['trace', 'replay', file, '--machine', 'robot'], /--machine: unknown machine "robot" \(expected gcs, node, raylet, actor, placement_group, autoscaler\)/],
  ['replay --id without a value', ['trace', 'replay', file, '--id'], /--id needs a value/],
  ['replay two files', ['trace', 'replay', file, file], /unexpected argument/],
  ['statechart without machine', ['statechart'], /statechart: missing machine/],
  ['statechart unknown machine', ['statechart', 'robot'], /statechart: unknown machine "robot"/],
  ['statechart --out unwritable', ['statechart', 'node', '--out', join(dir, 'no', 'dir', 'x.svg')], /statechart: --out: cannot write .*ENOENT/],
];
for (const [name, argv, pattern] of bad) {
  test(`bad usage: ${name}`, async () => {
    const { code, out, err } = await run(argv);
    assert.is(code, 2, err.join('\n'));
    assert.is(err.length, 1, err.join('\n'));
    assert.match(err[0], pattern);
    assert.equal(out, []);
  });
}

test('replay of a file that is not a trace is one line, exit 1', async () => {
  const notTrace = join(dir, 'not.jsonl');
  writeFileSync(notTrace, '{"hello":1}\n');
  for (const path of [notTrace, join(dir, 'missing.jsonl')]) {
    const { code, err } = await run(['trace', 'replay', path]);
    assert.is(code, 1);
    assert.is(err.length, 1);
    assert.match(err[0], /not an orrery-trace file|cannot read .*ENOENT/);
    assert.match(err[0], /\[INVALID_TRACE\]$/);
  }
});

test('replay prints every transition: machine, id, event, from → to, and where an actor is', async () => {
  const { code, out } = await run(['trace', 'replay', file]);
  assert.is(code, 0);
  assert.match(out[0], /trace of cluster "c1", recorded .*: 5 of 5 transition\(s\)/);
  assert.is(out.length, 6);
  assert.match(out[1], /^\s+\+0\.001s\s+actor\s+aaaa000000000001\s+xstate\.init\s+\(start\) → PENDING\s+node=-$/);
  assert.match(out[2], /actor\s+aaaa000000000001\s+PLACED\s+PENDING → onNode\.SCHEDULED\s+node=n1$/);
  assert.match(out[3], /raylet\s+n1\s+after\(heartbeat\)\s+running\.waiting → running\.beating$/);
  const actorOnly = await run(['trace', 'replay', file, '--machine', 'actor', '--id', 'aaaa', '--context']);
  assert.match(actorOnly.out[0], /3 of 5/);
  assert.equal(actorOnly.out.filter((l) => l.includes('context')).length, 3);
  assert.match(actorOnly.out[4], /context \{"nodeId":"n1"\}/);
});

test('replay --step shows one transition per key press (lines on a pipe), b steps back, ? repeats the help, q quits', async () => {
  const child = spawn(process.execPath, [...process.execArgv, CLI_MAIN, 'trace', 'replay', file, '--step', '--machine', 'actor'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: string[] = [];
  const prompts: string[] = [];
  // stdout (transitions) and stderr (prompts) are two pipes: a prompt can be read before the
  // transition printed ahead of it, so every wait is for both streams to have caught up.
  let recheck: (() => void) | undefined;
  createInterface({ input: child.stdout! }).on('line', (l) => { out.push(l); recheck?.(); });
  createInterface({ input: child.stderr! }).on('line', (l) => { prompts.push(l); recheck?.(); });
  const transitions = () => out.filter((l) => l.includes(' → '));
  const until = (cond: () => boolean) => new Promise<void>((resolve) => {
    const check = () => { if (cond()) { recheck = undefined; resolve(); } };
    recheck = check;
    check();
  });
  const step = (n: number, shown: number) => until(() => prompts.length >= n && transitions().length >= shown);
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    await step(2, 1);
    assert.match(prompts[0], /Enter next · b back · \? help · q quit/, 'the keys, said once at the start');
    assert.is(prompts[1], '[1/4]');
    assert.is(transitions().length, 1);
    child.stdin!.write('\n');
    await step(3, 2);
    assert.is(prompts[2], '[2/4]');
    assert.match(transitions().at(-1)!, /PLACED\s+PENDING → onNode\.SCHEDULED/);
    const first = transitions()[0];
    child.stdin!.write('b\n');
    await step(4, 3);
    assert.is(prompts[3], '[1/4]', 'one step back');
    assert.is(transitions().at(-1), first, 'the first transition again');
    child.stdin!.write('b\n');
    await step(5, 3);
    assert.is(prompts[4], '(at the first transition)');
    child.stdin!.write('?\n');
    await step(6, 3);
    assert.is(prompts[5], prompts[0], 'the help again');
    child.stdin!.write('q\n');
    assert.is(await exited, 0);
    assert.is(transitions().length, 3, 'q stopped: first, second, first again');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

test('statechart writes an SVG to --out, or prints it', async () => {
  const path = join(dir, 'actor.svg');
  const { code, err } = await run(['statechart', 'actor', '--out', path]);
  assert.is(code, 0);
  assert.match(err[0], /wrote the actor statechart to/);
  assert.match(readFileSync(path, 'utf8'), /data-state="onNode\.ALIVE"/);
  const printed = await run(['statechart', 'placement-group']);
  assert.is(printed.code, 0);
  assert.match(printed.out.join('\n'), /^<svg [\s\S]*<\/svg>$/);
});

test.after(() => rmSync(dir, { recursive: true, force: true }));
test.run();
