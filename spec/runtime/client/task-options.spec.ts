// Task options and definitions, checked at the call: typed errors naming the option, nothing sent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { In, labelIn, nodeAffinity, nodeIdAffinity } from '../../../lib/index.ts';
import { defineTask } from '../../../runtime/client/task-function.ts';
import { validateTaskOptions, type TaskRunOptions } from '../../../runtime/client/task-options.ts';
import { add, Add } from '../../fixtures/tasks/tasks.ts';

const codeOf = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return undefined;
};

const bad: [string, TaskRunOptions, string][] = [
  ['an unknown option', { name: 'x' } as TaskRunOptions, 'INVALID_OPTION'],
  ['maxRetries below -1', { maxRetries: -2 }, 'INVALID_OPTION'],
  ['maxRetries not an integer', { maxRetries: 1.5 }, 'INVALID_OPTION'],
  ['timeoutMs of 0', { timeoutMs: 0 }, 'INVALID_OPTION'],
  ['timeoutMs not whole', { timeoutMs: 2.5 }, 'INVALID_OPTION'],
  ['timeoutMs past what a timer takes', { timeoutMs: 2 ** 31 }, 'INVALID_OPTION'],
  ['timeoutMs as a string', { timeoutMs: '5s' as never }, 'INVALID_OPTION'],
  ['negative CPUs', { numCpus: -1 }, 'INVALID_OPTION'],
  ['a bad resource name', { resources: { 'bad name': 1 } }, 'INVALID_RESOURCE'],
  ['a malformed selector', { labelSelector: { region: 'in(a' } }, 'INVALID_SELECTOR'],
  ['a bad label key in a selector', { labelSelector: { 'bad key': 'x' } }, 'INVALID_SELECTOR'],
  ['a fallback that is not an array', { fallbackStrategy: {} as never }, 'INVALID_OPTION'],
  ['an unknown strategy', { schedulingStrategy: 'PACK' as never }, 'INVALID_OPTION'],
];
for (const [name, options, code] of bad) {
  test(`refuses ${name} (${code})`, () => assert.is(codeOf(() => validateTaskOptions(options, { namespace: 'default' })), code));
}

test('the wire carries the placement options only; maxRetries defaults to 3', () => {
  const valid = validateTaskOptions({ numCpus: 2, labelSelector: { region: 'eu' }, maxRetries: 5 }, { namespace: 'default' });
  assert.equal(valid.wire, { numCpus: 2, labelSelector: { region: 'eu' } });
  assert.is(valid.maxRetries, 5);
  assert.is(validateTaskOptions({}, { namespace: 'default' }).maxRetries, 3);
  assert.is(validateTaskOptions({ maxRetries: -1 }, { namespace: 'default' }).maxRetries, -1);
});

test('timeoutMs is the driver\'s, not the wire\'s options: absent, the connection\'s call timeout applies', () => {
  const valid = validateTaskOptions({ numCpus: 1, timeoutMs: 600_000 }, { namespace: 'default' });
  assert.equal(valid.wire, { numCpus: 1 });
  assert.is(valid.timeoutMs, 600_000);
  assert.is(validateTaskOptions({}, { namespace: 'default' }).timeoutMs, undefined);
  try {
    validateTaskOptions({ timeoutMs: -5 }, { namespace: 'default' });
    assert.unreachable('refused');
  } catch (err) {
    assert.match((err as Error).message, /timeoutMs/);
    assert.match((err as Error).message, /expected a whole number of milliseconds from 1 to 2147483647/);
  }
});

test('a node-id affinity is known to the driver, which sends the task straight to a hard pin', () => {
  assert.equal(validateTaskOptions({ schedulingStrategy: nodeIdAffinity('n1') }, { namespace: 'default' }).pin, { nodeId: 'n1', soft: false });
  assert.equal(validateTaskOptions({ schedulingStrategy: nodeIdAffinity('n1', { soft: true }) }, { namespace: 'default' }).pin, { nodeId: 'n1', soft: true });
  assert.is(validateTaskOptions({ schedulingStrategy: nodeAffinity(labelIn('a', ['b'])) }, { namespace: 'default' }).pin, undefined);
});

test('defineTask names the function by its export name and keeps checked defaults', () => {
  assert.is(Add.functionName, 'add');
  assert.is(Add.moduleUrl, new URL('../../fixtures/tasks/tasks.ts', import.meta.url).href);
  const withDefaults = defineTask(import.meta.url, add, { numCpus: 0.5, tolerations: { gpu: In('true') } });
  assert.equal(withDefaults.defaults, { numCpus: 0.5, tolerations: { gpu: In('true') } });
  assert.ok(Object.isFrozen(withDefaults));
});

test('defineTask refuses a bad module URL, a class, an anonymous function and bad defaults', () => {
  assert.is(codeOf(() => defineTask('not a url', add)), 'INVALID_OPTION');
  assert.is(codeOf(() => defineTask(import.meta.url, class Job {} as never)), 'INVALID_OPTION');
  assert.is(codeOf(() => defineTask(import.meta.url, (() => () => 1)())), 'INVALID_OPTION');
  assert.is(codeOf(() => defineTask(import.meta.url, add, { numGpus: -1 })), 'INVALID_OPTION');
});

test('defineTask refuses a module no worker host would load (node:, data:, https:), before anything is sent', () => {
  for (const url of ['node:child_process', 'data:text/javascript,export function add(){}', 'https://example.com/tasks.js', 'file://fileserver/tasks.js']) {
    assert.is(codeOf(() => defineTask(url, add)), 'CODE_SOURCE_REFUSED', url);
  }
});

test('defineTask accepts a function written inside the call (the decorated form) and names it by its name', () => {
  const square = defineTask(import.meta.url, function square(x: number) {
    return x * x;
  });
  assert.is(square.functionName, 'square');
  assert.is(square.moduleUrl, import.meta.url);
  assert.is(codeOf(() => defineTask(import.meta.url, (x: number) => x)), 'INVALID_OPTION', 'an arrow written in the call has no name');
});

test.run();
