// The arguments of bench:e2e's creation-by-node-count section (bench/support/e2e-nodes.ts): what
// they accept, and a one-line error naming the flag for anything else.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inFlightArg, nodeCountsArg } from '../../bench/support/e2e-nodes.ts';

test('--nodes takes counts, spaced or inline, and says what it expects otherwise', () => {
  assert.equal(nodeCountsArg(['--nodes', '4,16']), { counts: [4, 16], consumed: ['--nodes', '4,16'] });
  assert.equal(nodeCountsArg(['--json', '--nodes=4,16,32']), { counts: [4, 16, 32], consumed: ['--nodes=4,16,32'] });
  assert.is(nodeCountsArg(['--json']), undefined);
  for (const bad of [['--nodes'], ['--nodes', '0'], ['--nodes=4,x'], ['--nodes', '257']]) {
    assert.throws(() => nodeCountsArg(bad), /^--nodes expects node counts such as 4 or 4,16,32/, bad.join(' '));
  }
});

test('--in-flight takes a whole number of creates, spaced or inline, and says what it expects otherwise', () => {
  assert.equal(inFlightArg(['--nodes', '4', '--in-flight', '16']), { inFlight: 16, consumed: ['--in-flight', '16'] });
  assert.equal(inFlightArg(['--in-flight=1']), { inFlight: 1, consumed: ['--in-flight=1'] });
  assert.is(inFlightArg(['--nodes', '4']), undefined);
  for (const bad of [['--in-flight'], ['--in-flight', '0'], ['--in-flight=2.5'], ['--in-flight', 'many'], ['--in-flight='], ['--in-flight', '100001']]) {
    assert.throws(() => inFlightArg(bad), /^--in-flight expects a whole number of creates from 1 to 100000 \(got /, bad.join(' '));
  }
});

test.run();
