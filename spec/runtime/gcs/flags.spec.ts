import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_ADDRESS, FlagError, parseGcsFlags, type GcsFlags } from '../../../runtime/gcs/flags.ts';

const defaults: GcsFlags = { address: DEFAULT_ADDRESS, access: {}, connectWaitSeconds: 0, cluster: 'default', rareResources: [], heartbeatMs: 500, nodeTimeoutMs: 3000, maxDeadActors: 100_000, maxDeadNodes: 1_000, maxRemovedGroups: 10_000, persist: 'auto', graceMs: 3000, leaseMs: 2000, jobTimeoutMs: 30_000, createTimeoutMs: 30_000, codeSweepMs: 600_000, help: false };

const accepted: { name: string; argv: string[]; env?: Record<string, string>; want: Partial<GcsFlags> }[] = [
  { name: 'no flags', argv: [], want: {} },
  { name: 'the address from the environment', argv: [], env: { ORRERY_ADDRESS: 'nats://10.0.0.1:4222' }, want: { address: 'nats://10.0.0.1:4222' } },
  { name: '--address over the environment', argv: ['--address', 'nats://a:1,nats://b:2'], env: { ORRERY_ADDRESS: 'nats://x:1' }, want: { address: 'nats://a:1,nats://b:2' } },
  { name: '--flag=value', argv: ['--cluster=prod', '--heartbeat-ms=100', '--node-timeout-ms=1000'], want: { cluster: 'prod', heartbeatMs: 100, nodeTimeoutMs: 1000 } },
  { name: 'the job timeout', argv: ['--job-timeout-ms', '2000'], want: { jobTimeoutMs: 2000 } },
  { name: 'the job timeout from the environment', argv: [], env: { ORRERY_JOB_TIMEOUT_MS: '5000' }, want: { jobTimeoutMs: 5000 } },
  { name: 'the create timeout', argv: ['--create-timeout-ms=5000'], want: { createTimeoutMs: 5000 } },
  { name: 'the create timeout from the environment', argv: [], env: { ORRERY_CREATE_TIMEOUT_MS: '1000' }, want: { createTimeoutMs: 1000 } },
  { name: 'the code sweep grace', argv: ['--code-sweep-ms', '2000'], want: { codeSweepMs: 2000 } },
  { name: 'no code sweep, from the environment', argv: [], env: { ORRERY_CODE_SWEEP_MS: '0' }, want: { codeSweepMs: 0 } },
  { name: 'rare resources, deduplicated', argv: ['--rare-resources', 'GPU, my_rare,GPU'], want: { rareResources: ['GPU', 'my_rare'] } },
  { name: '--help', argv: ['--help'], want: { help: true } },
  { name: 'heartbeat and timeout from the environment', argv: [], env: { ORRERY_HEARTBEAT_MS: '100', ORRERY_NODE_TIMEOUT_MS: '800' }, want: { heartbeatMs: 100, nodeTimeoutMs: 800 } },
  { name: 'flags over the environment', argv: ['--node-timeout-ms', '1500'], env: { ORRERY_NODE_TIMEOUT_MS: '800' }, want: { nodeTimeoutMs: 1500 } },
  { name: '--max-dead-actors', argv: ['--max-dead-actors', '2000'], want: { maxDeadActors: 2000 } },
  { name: 'no dead actors kept', argv: ['--max-dead-actors=0'], want: { maxDeadActors: 0 } },
  { name: 'max dead actors from the environment', argv: [], env: { ORRERY_MAX_DEAD_ACTORS: '500' }, want: { maxDeadActors: 500 } },
  { name: '--max-dead-nodes', argv: ['--max-dead-nodes', '50'], want: { maxDeadNodes: 50 } },
  { name: 'no dead nodes kept', argv: ['--max-dead-nodes=0'], want: { maxDeadNodes: 0 } },
  { name: 'max dead nodes from the environment', argv: [], env: { ORRERY_MAX_DEAD_NODES: '20' }, want: { maxDeadNodes: 20 } },
  { name: '--max-removed-groups', argv: ['--max-removed-groups=300'], want: { maxRemovedGroups: 300 } },
  { name: 'removed groups from the environment', argv: [], env: { ORRERY_MAX_REMOVED_GROUPS: '0' }, want: { maxRemovedGroups: 0 } },
  { name: '--no-persist', argv: ['--no-persist'], want: { persist: 'off' } },
  { name: '--persist on', argv: ['--persist', 'on'], want: { persist: 'on' } },
  { name: 'persistence from the environment', argv: [], env: { ORRERY_PERSIST: 'off' }, want: { persist: 'off' } },
  { name: '--grace-ms, and from the environment', argv: ['--grace-ms', '500'], env: { ORRERY_GRACE_MS: '9' }, want: { graceMs: 500 } },
  { name: '--lease-ms', argv: ['--lease-ms=500'], want: { leaseMs: 500 } },
  { name: 'a grace window of 0 (reconcile at once)', argv: [], env: { ORRERY_GRACE_MS: '0' }, want: { graceMs: 0 } },
  { name: '--max-dead-actors over the environment', argv: ['--max-dead-actors', '7'], env: { ORRERY_MAX_DEAD_ACTORS: '500' }, want: { maxDeadActors: 7 } },
];

for (const c of accepted) {
  test(`accepts ${c.name}`, () => {
    assert.equal(parseGcsFlags(c.argv, c.env ?? {}), { ...defaults, ...c.want });
  });
}

const refused: { name: string; argv: string[]; env?: Record<string, string>; flag: string; problem: RegExp }[] = [
  { name: 'a bad timeout in the environment', argv: [], env: { ORRERY_NODE_TIMEOUT_MS: 'soon' }, flag: 'ORRERY_NODE_TIMEOUT_MS', problem: /whole number/ },
  { name: 'a persistence mode that is not one', argv: ['--persist', 'yes'], flag: '--persist', problem: /auto, on or off/ },
  { name: 'a bad persistence mode in the environment', argv: [], env: { ORRERY_PERSIST: 'maybe' }, flag: 'ORRERY_PERSIST', problem: /auto, on or off/ },
  { name: '--no-persist with --persist', argv: ['--no-persist', '--persist', 'on'], flag: '--no-persist', problem: /cannot be given with/ },
  { name: 'a lease too short to renew', argv: ['--lease-ms', '50'], flag: '--lease-ms', problem: />= 100/ },
  { name: 'a job timeout too short', argv: ['--job-timeout-ms', '10'], flag: '--job-timeout-ms', problem: />= 100/ },
  { name: 'a create timeout too short', argv: ['--create-timeout-ms', '50'], flag: '--create-timeout-ms', problem: />= 100/ },
  { name: 'a code sweep grace that is not a number', argv: ['--code-sweep-ms', '10m'], flag: '--code-sweep-ms', problem: /whole number of milliseconds >= 0, got "10m"/ },
  { name: 'a code sweep grace too short for an upload between two chunks', argv: ['--code-sweep-ms', '999'], flag: '--code-sweep-ms', problem: /0 \(off\) or at least 1000 ms, got "999"/ },
  { name: 'a negative code sweep grace in the environment', argv: [], env: { ORRERY_CODE_SWEEP_MS: '-5' }, flag: 'ORRERY_CODE_SWEEP_MS', problem: />= 0/ },
  { name: 'a negative grace window', argv: ['--grace-ms', '-1'], flag: '--grace-ms', problem: /whole number/ },
  { name: 'an unknown flag', argv: ['--verbose'], flag: '--verbose', problem: /unknown flag/ },
  { name: 'a stray argument', argv: ['gcs'], flag: 'gcs', problem: /unexpected argument/ },
  { name: 'a flag without its value', argv: ['--cluster'], flag: '--cluster', problem: /needs a value/ },
  { name: 'a flag given twice', argv: ['--cluster', 'a', '--cluster', 'b'], flag: '--cluster', problem: /more than once/ },
  { name: 'a cluster that is not a subject token', argv: ['--cluster', 'a.b'], flag: '--cluster', problem: /subject token/ },
  { name: 'a heartbeat that is not a number', argv: ['--heartbeat-ms', 'fast'], flag: '--heartbeat-ms', problem: /whole number/ },
  { name: 'a heartbeat below 10 ms', argv: ['--heartbeat-ms', '5'], flag: '--heartbeat-ms', problem: />= 10/ },
  { name: 'a fractional timeout', argv: ['--node-timeout-ms', '2.5'], flag: '--node-timeout-ms', problem: /whole number/ },
  { name: 'a timeout no longer than the heartbeat', argv: ['--heartbeat-ms', '500', '--node-timeout-ms', '500'], flag: '--node-timeout-ms', problem: /longer than the heartbeat/ },
  { name: 'a rare resource that is no resource name', argv: ['--rare-resources', 'GPU,9lives'], flag: '--rare-resources', problem: /not a resource name: "9lives"/ },
  { name: 'an empty rare resource', argv: ['--rare-resources', 'GPU,,TPU'], flag: '--rare-resources', problem: /stray ','/ },
  { name: 'a negative dead-actor bound', argv: ['--max-dead-actors', '-1'], flag: '--max-dead-actors', problem: />= 0/ },
  { name: 'a negative dead-node bound', argv: ['--max-dead-nodes', '-3'], flag: '--max-dead-nodes', problem: />= 0/ },
  { name: 'a removed-group bound that is not a number', argv: ['--max-removed-groups', 'ten'], flag: '--max-removed-groups', problem: /whole number/ },
  { name: 'a dead-node bound that is not a number', argv: [], env: { ORRERY_MAX_DEAD_NODES: 'lots' }, flag: 'ORRERY_MAX_DEAD_NODES', problem: /whole number/ },
  { name: 'a dead-actor bound that is not a number', argv: [], env: { ORRERY_MAX_DEAD_ACTORS: 'many' }, flag: 'ORRERY_MAX_DEAD_ACTORS', problem: /whole number/ },
  { name: 'an empty address', argv: ['--address', ' '], flag: '--address', problem: /must not be empty/ },
];

for (const c of refused) {
  test(`refuses ${c.name}, naming ${c.flag}`, () => {
    try {
      parseGcsFlags(c.argv, c.env ?? {});
    } catch (err) {
      assert.instance(err, FlagError);
      const e = err as FlagError;
      assert.is(e.flag, c.flag);
      assert.is(e.code, 'INVALID_FLAG');
      assert.match(e.message, c.problem);
      assert.ok(e.message.startsWith(`${c.flag}: `));
      return;
    }
    assert.unreachable('expected a FlagError');
  });
}

test.run();
