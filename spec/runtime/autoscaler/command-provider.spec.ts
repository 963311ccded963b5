// The command provider's shell commands, run for real (/bin/sh): what `list` prints becomes the
// launches a restarted autoscaler takes over; what it cannot read fails the listing, naming the line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CommandProvider, parseList } from '../../../runtime/autoscaler/command-provider.ts';

const provider = (list?: string): CommandProvider =>
  new CommandProvider({ launch: 'true', terminate: 'true', ...(list === undefined ? {} : { list }), timeoutSeconds: 5, address: 'nats://127.0.0.1:1', cluster: 'prod' });

test('without a list command the provider cannot list its machines', () => {
  assert.is(provider().launched, undefined);
});

test('the list command sees the cluster and address; each line is a name, with its launch time when given', async () => {
  const nodes = await provider(`echo "# $ORRERY_CLUSTER at $ORRERY_ADDRESS"; echo prod-cpu-0a0a0a 1764374400; echo; echo prod-gpu-0b0b0b 2026-11-29T00:00:00Z; echo "  prod-cpu-0c0c0c  "`).launched!();
  assert.equal(nodes, [
    { nodeName: 'prod-cpu-0a0a0a', since: 1_764_374_400_000 },
    { nodeName: 'prod-gpu-0b0b0b', since: Date.parse('2026-11-29T00:00:00Z') },
    { nodeName: 'prod-cpu-0c0c0c' },
  ]);
});

test('a list command that fails, or prints what is not NAME [LAUNCHED-AT], fails the listing saying which line', async () => {
  const failed = await provider('echo "no credentials" >&2; exit 3').launched!().catch((e: Error & { code?: string }) => e);
  assert.is((failed as { code?: string }).code, 'PROVIDER_FAILED');
  assert.match((failed as Error).message, /^the list command exited with code 3: no credentials$/);
  const cases: [string, RegExp][] = [
    ['ok-node-0a0a0a\n"quoted name"', /line 2 \("\\"quoted name\\""\): not a node name/],
    ['a b c', /line 1 \("a b c"\): more than two fields/],
    ['a yesterday', /line 1 \("a yesterday"\): "yesterday" is neither an ISO 8601 time nor seconds since the epoch/],
  ];
  for (const [text, why] of cases) {
    assert.throws(() => parseList(text), (err: Error) => why.test(err.message) && /expected NAME \[LAUNCHED-AT\]$/.test(err.message));
  }
});

test.run();
