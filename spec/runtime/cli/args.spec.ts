import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UsageError, parseArgs } from '../../../runtime/cli/args.ts';

const spec = { head: 'boolean', address: 'string', 'num-cpus': 'string' } as const;

test('flags with separate and = values, booleans and positionals', () => {
  const a = parseArgs('start', ['--head', '--address', 'nats://h:1', '--num-cpus=2', 'x'], spec, 1);
  assert.equal(a.flags, { head: true, address: 'nats://h:1', 'num-cpus': '2' });
  assert.equal(a.positionals, ['x']);
  assert.equal(parseArgs('start', ['--num-cpus', '-1'], spec).flags, { 'num-cpus': '-1' }, 'a value may start with one dash');
});

const bad: [string, string[], RegExp, string | undefined][] = [
  ['unknown flag', ['--nope'], /start: unknown flag --nope \(expected --head, --address, --num-cpus\)/, '--nope'],
  ['short flag', ['-h'], /unknown flag -h/, '--h'],
  ['missing value at the end', ['--address'], /start: --address needs a value/, '--address'],
  ['missing value before a flag', ['--address', '--head'], /--address needs a value/, '--address'],
  ['empty = value', ['--address='], /--address needs a value/, '--address'],
  ['value for a boolean', ['--head=yes'], /--head takes no value/, '--head'],
  ['repeated', ['--head', '--head'], /--head is given more than once/, '--head'],
  ['extra positional', ['stray'], /unexpected argument "stray"/, undefined],
];

for (const [name, argv, pattern, flag] of bad) {
  test(`usage error: ${name}`, () => {
    try {
      parseArgs('start', argv, spec);
      assert.unreachable();
    } catch (err) {
      assert.instance(err, UsageError);
      assert.match((err as Error).message, pattern);
      assert.not.match((err as Error).message, /\n/);
      assert.is((err as UsageError).flag, flag);
    }
  });
}

test.run();
