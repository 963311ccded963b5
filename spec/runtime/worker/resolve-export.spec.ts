import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { defineActor, defineTask } from '../../../runtime/index.ts';
import { ACTOR_DEFINITION, TASK_DEFINITION } from '../../../runtime/definitions.ts';
import { resolveActorClass, resolveTaskFunction } from '../../../runtime/worker/resolve-export.ts';
import * as actors from '../../fixtures/actors.ts';
import * as decorated from '../../fixtures/decorated.ts';
import * as tasks from '../../fixtures/tasks/tasks.ts';

// How a worker host finds the class or function behind an export name (resolve-export.ts), on the
// namespaces of real fixture modules: the thing itself, or what defineActor / defineTask returned.

const ProbeClass = (decorated.Probe as unknown as Record<symbol, unknown>)[ACTOR_DEFINITION];
const squareFn = (decorated.square as unknown as Record<symbol, unknown>)[TASK_DEFINITION];

const actorCases: { name: string; mod: Record<string, unknown>; exportName: string; want: unknown }[] = [
  { name: 'a class exported under its name', mod: actors, exportName: 'Counter', want: actors.Counter },
  { name: 'a defineActor result (the decorated form)', mod: decorated, exportName: 'Probe', want: ProbeClass },
];

const actorRefusals: { name: string; mod: Record<string, unknown>; exportName: string; reason: string }[] = [
  { name: 'no such export', mod: actors, exportName: 'Missing', reason: 'the module has no export named "Missing"' },
  {
    name: 'a definition exported under another name than its class',
    mod: decorated,
    exportName: 'Hidden',
    reason: 'the module has no export named "Hidden" (the export "Renamed" defines the class "Hidden": export it under the class\'s own name)',
  },
  { name: 'a function', mod: actors, exportName: 'notAClass', reason: 'the export "notAClass" is neither a class nor an actor class from defineActor() (it is a function)' },
  { name: 'a number', mod: actors, exportName: 'notAClassValue', reason: 'the export "notAClassValue" is neither a class nor an actor class from defineActor() (it is a number)' },
  { name: 'a task definition', mod: decorated, exportName: 'square', reason: 'the export "square" is neither a class nor an actor class from defineActor() (it is a task from defineTask())' },
  { name: 'a plain object', mod: { Config: { a: 1 } }, exportName: 'Config', reason: 'the export "Config" is neither a class nor an actor class from defineActor() (it is an object)' },
  { name: 'null', mod: { Nothing: null }, exportName: 'Nothing', reason: 'the export "Nothing" is neither a class nor an actor class from defineActor() (it is null)' },
];

for (const c of actorCases) {
  test(`actor class: ${c.name}`, () => {
    const got = resolveActorClass(c.mod, c.exportName);
    assert.ok(got.ok, c.name);
    assert.is(got.ok && got.value, c.want);
  });
}

for (const c of actorRefusals) {
  test(`actor class refused: ${c.name}`, () => {
    assert.equal(resolveActorClass(c.mod, c.exportName), { ok: false, reason: c.reason });
  });
}

const taskCases: { name: string; mod: Record<string, unknown>; exportName: string; want: unknown }[] = [
  { name: 'a function exported under its name', mod: tasks, exportName: 'add', want: tasks.add },
  { name: 'a defineTask result (the decorated form)', mod: decorated, exportName: 'square', want: squareFn },
];

const taskRefusals: { name: string; mod: Record<string, unknown>; exportName: string; reason: string }[] = [
  {
    name: 'a function only exported as a definition under another name',
    mod: tasks,
    exportName: 'hidden',
    reason: 'the module has no export named "hidden" (the export "Hidden" defines the function "hidden": export it under the function\'s own name)',
  },
  { name: 'a class', mod: tasks, exportName: 'NotAFunction', reason: 'the export "NotAFunction" is neither a function nor a task from defineTask() (it is a class)' },
  { name: 'a number', mod: tasks, exportName: 'notAFunction', reason: 'the export "notAFunction" is neither a function nor a task from defineTask() (it is a number)' },
  { name: 'an actor definition', mod: decorated, exportName: 'Probe', reason: 'the export "Probe" is neither a function nor a task from defineTask() (it is an actor class from defineActor())' },
];

for (const c of taskCases) {
  test(`task function: ${c.name}`, () => {
    const got = resolveTaskFunction(c.mod, c.exportName);
    assert.ok(got.ok, c.name);
    assert.is(got.ok && got.value, c.want);
  });
}

for (const c of taskRefusals) {
  test(`task function refused: ${c.name}`, () => {
    assert.equal(resolveTaskFunction(c.mod, c.exportName), { ok: false, reason: c.reason });
  });
}

test('the decorated class and function are the ones written in the module', () => {
  const resolved = resolveActorClass(decorated, 'Probe');
  assert.ok(resolved.ok);
  const probe = new (resolved as { value: new (label: string) => { note(x: string): unknown } }).value('p');
  assert.equal(probe.note('a'), { label: 'p', seen: ['a'] });
  const fn = resolveTaskFunction(decorated, 'square');
  assert.is(fn.ok && fn.value(7), 49);
});

test('a definition carries its class or function out of sight: it spreads, serializes and compares as its plain fields', () => {
  class Counter {}
  const cls = defineActor(decorated.DECORATED_URL, Counter, { numCpus: 1 });
  assert.equal(Object.keys(cls), ['moduleUrl', 'className', 'defaults']);
  assert.equal(JSON.parse(JSON.stringify(cls)), { moduleUrl: decorated.DECORATED_URL, className: 'Counter', defaults: { numCpus: 1 } });
  assert.ok(Object.isFrozen(cls));
  function f(): number {
    return 1;
  }
  const task = defineTask(decorated.DECORATED_URL, f);
  assert.equal({ ...task }, { moduleUrl: decorated.DECORATED_URL, functionName: 'f', defaults: {} });
  assert.ok(Object.isFrozen(task));
  assert.is(resolveActorClass({ Counter: cls }, 'Counter').ok && (resolveActorClass({ Counter: cls }, 'Counter') as { value: unknown }).value, Counter);
  assert.is((resolveTaskFunction({ f: task }, 'f') as { value: unknown }).value, f);
});

test.run();
