// The GCS's settings given to `orrery start --head` / `--gcs` reach the GCS process as its own flags:
// what the GCS's parser reads from them is what the user gave (runtime/cli/gcs-settings.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseArgs } from '../../../runtime/cli/args.ts';
import { GCS_SETTING_FLAGS, gcsSettingsOf } from '../../../runtime/cli/gcs-settings.ts';
import { parseGcsFlags } from '../../../runtime/gcs/flags.ts';

const settings = (argv: string[], runsGcs = true, env: NodeJS.ProcessEnv = {}) => gcsSettingsOf(parseArgs('start', argv, { head: 'boolean', ...GCS_SETTING_FLAGS }), runsGcs, env);

test('every setting given to the head is read by the GCS as given', () => {
  const argv = settings([
    '--head', '--heartbeat-ms', '250', '--node-timeout-ms=2000', '--create-timeout-ms', '120000', '--grace-ms', '0', '--lease-ms', '4000',
    '--job-timeout-ms', '60000', '--max-dead-actors', '10', '--max-dead-nodes', '5', '--max-removed-groups', '7', '--persist', 'on', '--code-sweep-ms', '0',
  ]);
  const gcs = parseGcsFlags(argv, {});
  assert.equal(
    [gcs.heartbeatMs, gcs.nodeTimeoutMs, gcs.createTimeoutMs, gcs.graceMs, gcs.leaseMs, gcs.jobTimeoutMs, gcs.maxDeadActors, gcs.maxDeadNodes, gcs.maxRemovedGroups, gcs.persist, gcs.codeSweepMs],
    [250, 2000, 120_000, 0, 4000, 60_000, 10, 5, 7, 'on', 0],
  );
});

test('--no-persist reaches the GCS as tables in memory', () => {
  assert.is(parseGcsFlags(settings(['--head', '--no-persist']), {}).persist, 'off');
});

test('no settings: nothing is added, and the GCS keeps its defaults', () => {
  assert.equal(settings(['--head']), []);
  assert.equal(settings([], false), []);
});

test('the environment is not copied onto the command line (the GCS reads it itself), but is checked', () => {
  assert.equal(settings(['--head'], true, { ORRERY_NODE_TIMEOUT_MS: '9000' }), []);
  assert.throws(() => settings(['--head'], true, { ORRERY_LEASE_MS: '2s' }), (err: Error) => /ORRERY_LEASE_MS/.test(err.message));
  // a variable the GCS does not read is not this check's business
  assert.equal(settings(['--head'], true, { ORRERY_CREDS: '/nowhere' }), []);
});

test.run();
