// The CLI in-process: every bad flag or value is exactly one stderr line naming the flag, exit 2;
// an unreachable server is one line naming the address, exit 1. Nothing is started.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runCli } from '../../../runtime/cli/run.ts';

async function run(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  // already aborted: a command that wrongly got past its checks (a dashboard, events --follow) ends at once rather than hang the suite
  const code = await runCli(argv, { out: (l) => out.push(l), err: (l) => err.push(l), env, signal: AbortSignal.abort() });
  return { code, out, err };
}

const dir = mkdtempSync(join(tmpdir(), 'orrery-cli-spec-'));
const badYaml = join(dir, 'bad.yaml');
writeFileSync(badYaml, 'region: [us, eu]\n');
const shortToken = join(dir, 'short.token');
writeFileSync(shortToken, 'abc\n');

const cases: [string, string[], RegExp][] = [
  ['unknown command', ['frobnicate'], /unknown command "frobnicate"/],
  ['unknown flag', ['start', '--head', '--gpus', '1'], /start: unknown flag --gpus/],
  ['--num-cpus not a number', ['start', '--head', '--num-cpus', 'four'], /--num-cpus: expected a non-negative number, got "four"/],
  ['--num-gpus negative', ['start', '--head', '--num-gpus', '-1'], /--num-gpus: expected a non-negative number/],
  ['--num-cpus too precise', ['start', '--head', '--num-cpus', '0.00001'], /--num-cpus: .*at least 0\.0001/],
  ['--max-queued-tasks zero', ['start', '--head', '--max-queued-tasks', '0'], /--max-queued-tasks: expected a whole number of at least 1, got "0"/],
  ['--max-queued-task-bytes not a number', ['start', '--head', '--max-queued-task-bytes', '64MiB'], /--max-queued-task-bytes: expected a whole number/],
  ['--labels syntax', ['start', '--head', '--labels', 'region'], /--labels: .*expected key=value/],
  ['--labels reserved prefix', ['start', '--head', '--labels', 'orrery.io/node-id=x'], /--labels: .*orrery\.io/],
  ['--labels-file missing', ['start', '--head', '--labels-file', join(dir, 'none.yaml')], /--labels-file: cannot read .*none\.yaml \(ENOENT\)/],
  ['--labels-file not a flat mapping', ['start', '--head', '--labels-file', badYaml], /--labels-file: .*scalar/],
  ['--taints effect', ['start', '--head', '--taints', 'gpu=true:Sometimes'], /--taints: .*effect must be one of/],
  ['--taints pair', ['start', '--head', '--taints', 'gpu'], /--taints: expected key=value/],
  ['--resources JSON', ['start', '--head', '--resources', '{GPU:1}'], /--resources: expected a JSON object/],
  ['--resources array', ['start', '--head', '--resources', '[1]'], /--resources: expected a JSON object/],
  ['CPU in --resources and --num-cpus', ['start', '--head', '--resources', '{"CPU":4}', '--num-cpus', '2'], /start: --num-cpus: --resources also sets CPU; give it once/],
  ['--resources bad quantity', ['start', '--head', '--resources', '{"disk":-2}'], /--resources: .*disk.*negative/],
  ['--node-name', ['start', '--head', '--node-name', 'no spaces'], /--node-name: "no spaces" cannot be a node name/],
  ['--address scheme', ['status', '--address', 'http://h:4222'], /status: --address: "http:\/\/h:4222" has scheme http/],
  ['ORRERY_ADDRESS checked too', ['list', 'nodes'], /list: ORRERY_ADDRESS: "ftp:\/\/x" has scheme ftp/],
  ['--cluster', ['status', '--cluster', 'a.b'], /status: --cluster: "a\.b" is not a cluster name/],
  ['start without address', ['start', '--num-cpus', '2'], /start: --address is required/],
  ['list without kind', ['list'], /list: expected what to list: nodes, actors, placement-groups or jobs/],
  ['list of something else', ['list', 'tasks'], /list: cannot list "tasks"/],
  ['kill without an actor', ['kill'], /kill: expected the actor to kill: its id or its name/],
  ['kill of two actors', ['kill', 'a', 'b'], /kill: unexpected argument "b"/],
  ['kill --restart with a value', ['kill', 'a', '--restart=yes'], /kill: --restart takes no value/],
  ['list jobs by class', ['list', 'jobs', '--filter', 'class=x'], /list: --filter: jobs cannot be filtered by "class"/],
  ['--json on status', ['status', '--json'], /status: unknown flag --json/],
  ['--rare-resources off the head', ['start', '--address', 'nats://h:4222', '--rare-resources', 'GPU'], /start: --rare-resources is a cluster setting: give it to the head/],
  ['--rare-resources name', ['start', '--head', '--rare-resources', 'GPU,9lives'], /start: --rare-resources: not a resource name: "9lives"/],
  ['--job-timeout-ms off the head', ['start', '--address', 'nats://h:4222', '--job-timeout-ms', '5000'], /start: --job-timeout-ms is a cluster setting: give it to the head/],
  ['--job-timeout-ms value', ['start', '--head', '--job-timeout-ms', '5s'], /start: --job-timeout-ms: expected a whole number of milliseconds >= 100, got "5s"/],
  ['--job-timeout-ms too short', ['start', '--gcs', '--job-timeout-ms', '50'], /start: --job-timeout-ms: expected a whole number of milliseconds >= 100, got "50"/],
  ['--node-timeout-ms off the head', ['start', '--address', 'nats://h:4222', '--node-timeout-ms', '10000'], /start: --node-timeout-ms is a cluster setting: give it to the head/],
  ['--no-persist off the head', ['start', '--address', 'nats://h:4222', '--no-persist'], /start: --no-persist is a cluster setting: give it to the head/],
  ['--node-timeout-ms within a heartbeat', ['start', '--head', '--heartbeat-ms', '1000', '--node-timeout-ms', '800'], /start: --node-timeout-ms: must be longer than the heartbeat \(1000 ms\)/],
  ['--create-timeout-ms too short', ['start', '--gcs', '--create-timeout-ms', '10'], /start: --create-timeout-ms: expected a whole number of milliseconds >= 100, got "10"/],
  ['--code-sweep-ms under a second', ['start', '--head', '--code-sweep-ms', '999'], /start: --code-sweep-ms: expected 0 \(off\) or at least 1000 ms, got "999"/],
  ['--persist value', ['start', '--head', '--persist', 'maybe'], /start: --persist: expected auto, on or off, got "maybe"/],
  ['--persist with --no-persist', ['start', '--head', '--no-persist', '--persist', 'on'], /start: --no-persist: cannot be given with --persist/],
  ['up with a GCS setting out of range', ['up', badYaml, '--lease-ms', '50'], /up: --lease-ms: expected a whole number of milliseconds >= 100, got "50"/],
  ['label without a node', ['label', '--set', 'a=b'], /label: which node\? give one of --node-id, --node-name/],
  ['label with two nodes', ['label', '--node-id', 'n1', '--node-name', 'x', '--set', 'a=b'], /label: give only one of --node-id, --node-name/],
  ['label --node-ip', ['label', '--node-ip', '10.0.0.1', '--set', 'a=b'], /label: unknown flag --node-ip/],
  ['label with nothing to change', ['label', '--node-id', 'n1'], /label: nothing to change/],
  ['label --set syntax', ['label', '--node-id', 'n1', '--set', 'zone'], /label: --set: .*expected key=value/],
  ['label --set reserved', ['label', '--node-id', 'n1', '--set', 'orrery.io/node-name=x'], /label: --set: .*orrery\.io/],
  ['label --remove key', ['label', '--node-id', 'n1', '--remove', 'bad key'], /label: --remove: invalid label key "bad key"/],
  ['label --remove stray comma', ['label', '--node-id', 'n1', '--remove', 'a,,b'], /label: --remove: empty key/],
  ['taint without a node', ['taint', '--add', 'a=b'], /taint: which node\? give one of --node-id, --node-name, --node-ip/],
  ['taint with nothing to change', ['taint', '--node-ip', '10.0.0.1'], /taint: nothing to change/],
  ['taint --add effect', ['taint', '--node-id', 'n1', '--add', 'gpu=true:Never'], /taint: --add: .*effect must be one of NoSchedule, PreferNoSchedule, NoExecute/],
  ['taint --add pair', ['taint', '--node-id', 'n1', '--add', 'gpu'], /taint: --add: expected key=value\[:Effect\]/],
  ['taint --add value', ['taint', '--node-id', 'n1', '--add', 'gpu=has space:NoExecute'], /taint: --add: invalid taint "gpu"="has space:NoExecute": value may contain only/],
  ['taint --add duplicate', ['taint', '--node-id', 'n1', '--add', 'a=1,a=2'], /taint: --add: duplicate key "a"/],
  ['taint --add reserved', ['taint', '--node-id', 'n1', '--add', 'orrery.io/rare-gpu=true'], /taint: --add: .*orrery\.io/],
  ['events --type', ['events', '--type', 'schedule_failed,actor_exploded'], /events: --type: unknown event type "actor_exploded"/],
  ['events --limit', ['events', '--limit', '0'], /events: --limit: expected a whole number from 1 to 100000/],
  ['events stray argument', ['events', 'now'], /events: unexpected argument "now"/],
  ['list --state of nodes', ['list', 'nodes', '--state', 'ALIVE'], /list: --state: only actors are listed by state/],
  ['list --state unknown', ['list', 'actors', '--state', 'alive,ASLEEP'], /list: --state: unknown actor state "ASLEEP"/],
  ['list --filter key', ['list', 'nodes', '--filter', 'class=Counter'], /list: --filter: nodes cannot be filtered by "class" \(expected state, name, node\)/],
  ['list --filter pair', ['list', 'actors', '--filter', 'state'], /list: --filter: expected key=value/],
  ['list --limit', ['list', 'actors', '--limit', '0'], /list: --limit: expected a whole number of at least 1/],
  ['list --json and --detail', ['list', 'actors', '--json', '--detail'], /list: give --json or --detail, not both/],
  ['--creds unreadable', ['status', '--creds', join(dir, 'none.creds')], /status: --creds: cannot read .*none\.creds: ENOENT/],
  ['--creds without a value', ['list', 'nodes', '--creds'], /list: --creds needs a value/],
  ['--tls-cert without --tls-key', ['status', '--tls-cert', badYaml], /status: --tls-key: a client certificate needs both --tls-cert and --tls-key/],
  ['--creds on the head', ['start', '--head', '--creds', badYaml], /start: --head runs a GCS and a raylet, two roles .*--auth-dir/],
  ['--auth-dir off the head', ['start', '--address', 'nats://h:4222', '--auth-dir', dir], /start: --auth-dir is the head's; a joining node takes --creds DIR\/node\.creds/],
  ['--listen with --address', ['start', '--head', '--address', 'nats://h:4222', '--listen', '0.0.0.0'], /start: --listen is where the nats-server .* takes no --address/],
  ['ORRERY_CREATE_TIMEOUT_MS checked before a GCS starts', ['start', '--head'], /start: ORRERY_CREATE_TIMEOUT_MS: expected a whole number of milliseconds >= 100, got "30s"/],
  ['auth without init', ['auth'], /auth: a subcommand is required/],
  ['dashboard --token-file missing', ['dashboard', '--token-file', join(dir, 'no-token')], /dashboard: --token-file: cannot read .*no-token \(ENOENT\)/],
  ['dashboard --token-file too short', ['dashboard', '--token-file', shortToken], /dashboard: --token-file: .*short\.token: the token must be at least 16 characters/],
  ['auth init without --dir', ['auth', 'init'], /auth init: --dir is required/],
  ['auth init --cluster', ['auth', 'init', '--dir', join(dir, 'x'), '--cluster', 'a b'], /auth init: --cluster: "a b" is not a cluster name/],
];

for (const [name, argv, pattern] of cases) {
  test(`bad usage: ${name}`, async () => {
    const env: NodeJS.ProcessEnv = name.startsWith('ORRERY_ADDRESS') ? { ORRERY_ADDRESS: 'ftp://x' } : name.startsWith('ORRERY_CREATE_TIMEOUT_MS') ? { ORRERY_CREATE_TIMEOUT_MS: '30s' } : {};
    const r = await run(argv, env);
    assert.is(r.code, 2);
    assert.equal(r.out, []);
    assert.is(r.err.length, 1, r.err.join('\n'));
    assert.match(r.err[0], pattern);
    assert.match(r.err[0], / \[USAGE\]$/, 'the line ends in its stable code');
  });
}

test('an unreachable NATS server is one line naming the address, exit 1', async () => {
  const r = await run(['status', '--address', 'nats://127.0.0.1:1']);
  assert.is(r.code, 1);
  assert.is(r.err.length, 1);
  assert.match(r.err[0], /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1/);
  const viaEnv = await run(['list', 'nodes'], { ORRERY_ADDRESS: 'nats://127.0.0.1:1' });
  assert.is(viaEnv.code, 1);
  assert.match(viaEnv.err[0], /nats:\/\/127\.0\.0\.1:1/);
});

test('--version prints the package.json version', async () => {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  for (const flag of ['--version', '-v', 'version']) {
    const r = await run([flag]);
    assert.is(r.code, 0);
    assert.equal(r.out, [`orrery ${pkg.version}`]);
  }
});

test('-h / --help / help CMD print that command\'s usage, with every one of its flags, and exit 0', async () => {
  const expectations: [string, RegExp[]][] = [
    ['start', [/orrery start --head/, /--rare-resources/, /--labels-file/, /--num-gpus/, /orrery start --gcs/]],
    ['explain', [/--options/, /--placement-group/, /--namespace/, /--json/]],
    ['taint', [/--node-id/, /--add/, /--remove/, /NoExecute/]],
    ['trace', [/trace record --out/, /trace replay FILE/, /--step/]],
    ['kill', [/orrery kill ACTOR/, /--namespace/, /--restart/, /--json/, /detached/]],
  ];
  for (const [command, patterns] of expectations) {
    for (const argv of [[command, '-h'], [command, '--help'], ['help', command]]) {
      const r = await run(argv);
      assert.is(r.code, 0, argv.join(' '));
      const text = r.out.join('\n');
      for (const p of patterns) assert.match(text, p, `${argv.join(' ')}: ${p}`);
      assert.not.match(text, command === 'start' ? /orrery status/ : /orrery start/, 'only that command');
    }
  }
});

test('help prints the usage and exits 0; no command exits 2', async () => {
  const help = await run(['--help']);
  assert.is(help.code, 0);
  assert.match(help.out.join('\n'), /orrery start --head/);
  assert.is((await run([])).code, 2);
});

test('auth init writes the configuration and each role\'s credentials, prints their paths and never a seed; a second run is AUTH_EXISTS', async () => {
  const target = join(dir, 'auth');
  const r = await run(['auth', 'init', '--dir', target, '--cluster', 'prod']);
  assert.is(r.code, 0, r.err.join('\n'));
  const text = r.out.join('\n');
  for (const file of ['nats-server.conf', 'gcs.creds', 'node.creds', 'driver.creds', 'observer.creds', 'admin.creds']) {
    assert.ok(text.includes(join(target, file)), file);
    assert.ok(readFileSync(join(target, file), 'utf8').length > 0, file);
  }
  assert.match(text, /orrery start --head --auth-dir/);
  assert.not.match(text, /SU[A-Z2-7]{50,}/, 'no seed printed');
  assert.match(readFileSync(join(target, 'driver.creds'), 'utf8'), /# orrery-cluster: prod/);
  const again = await run(['auth', 'init', '--dir', target]);
  assert.is(again.code, 1);
  assert.equal(again.err.length, 1);
  assert.match(again.err[0], /exists: orrery auth init does not replace keys unless --force .* \[AUTH_EXISTS\]$/);
  assert.is((await run(['auth', 'init', '--dir', target, '--force'])).code, 0);
});

test.run();
