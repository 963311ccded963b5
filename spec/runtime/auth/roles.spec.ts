// What each role may do, as issue 14 states it, checked against the permission lists the NATS
// server is given (roles.ts). A pattern matches a subject as NATS matches it ('*' one token, '>' the
// rest); the server enforcing these lists is auth.spec's (integration) to show.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ROLES, inboxPrefix, rolePermissions, type Role } from '../../../runtime/auth/roles.ts';

const c = 'prod';
const P = `orrery.${c}`;

/** NATS subject matching of a concrete subject (or a subscription pattern taken literally) by one allow pattern. */
function matches(pattern: string, subject: string): boolean {
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}
const may = (role: Role, op: 'publish' | 'subscribe', subject: string): boolean => rolePermissions(c, role)[op].some((pattern) => matches(pattern, subject));

test('the matcher matches as NATS does', () => {
  assert.ok(matches('a.*.c', 'a.b.c'));
  assert.not.ok(matches('a.*.c', 'a.b.d'));
  assert.ok(matches('a.>', 'a.b.c'));
  assert.not.ok(matches('a.>', 'a'));
  assert.not.ok(matches('a.b', 'a.b.c'));
});

const table: [Role, 'publish' | 'subscribe', string, boolean][] = [
  // a driver creates and calls, and reads; never a node's verbs, the view, raylet control or inspection
  ['driver', 'publish', `${P}.gcs.register_actor`, true],
  ['driver', 'publish', `${P}.gcs.create_pg`, true],
  ['driver', 'publish', `${P}.actor.a1.call`, true],
  ['driver', 'publish', `${P}.raylet.n1.submit_task`, true],
  ['driver', 'publish', `${P}.gcs.register_node`, false],
  ['driver', 'publish', `${P}.gcs.heartbeat`, false],
  ['driver', 'publish', `${P}.gcs.view`, false],
  ['driver', 'publish', `${P}.gcs.set_node_taints`, false],
  ['driver', 'publish', `${P}.gcs.drain_node`, false],
  ['driver', 'publish', `${P}.raylet.n1.create_actor`, false],
  ['driver', 'publish', `${P}.raylet.n1.commit_bundle`, false],
  ['driver', 'publish', `${P}.inspect.actor.a1`, false],
  ['driver', 'subscribe', `${P}.events.actor_state`, true],
  ['driver', 'subscribe', `${inboxPrefix(c, 'driver')}.abc.1`, true],
  ['driver', 'subscribe', `_INBOX.${c}.observer.abc.1`, false],
  ['driver', 'subscribe', `${P}.actor.a1.call`, false],
  ['driver', 'subscribe', `${P}.gcs.view`, false],
  ['driver', 'subscribe', `${P}.inspect.actor.a1`, false],
  // an observer reads and watches; it publishes no verb that changes anything
  ['observer', 'publish', `${P}.gcs.list_actors`, true],
  ['observer', 'publish', `${P}.gcs.explain`, true],
  ['observer', 'publish', `${P}.inspect_watch`, true],
  ['observer', 'subscribe', `${P}.inspect.actor.a1`, true],
  ['observer', 'subscribe', `${P}.inspect_batch`, true],
  ['observer', 'publish', `${P}.gcs.register_actor`, false],
  ['observer', 'publish', `${P}.gcs.kill_actor`, false],
  ['observer', 'publish', `${P}.gcs.remove_pg`, false],
  ['observer', 'publish', `${P}.actor.a1.call`, false],
  ['observer', 'publish', `${P}.raylet.n1.submit_task`, false],
  ['observer', 'subscribe', `${P}.actor.a1.call`, false],
  // an admin is a driver that may also change nodes
  ['admin', 'publish', `${P}.gcs.set_node_taints`, true],
  ['admin', 'publish', `${P}.gcs.set_node_labels`, true],
  ['admin', 'publish', `${P}.gcs.drain_node`, true],
  ['admin', 'publish', `${P}.gcs.heartbeat`, false],
  // the autoscaler runs as admin: it reads the demands and reports (issue 16); anyone who reads nodes reads its status
  ['admin', 'publish', `${P}.gcs.resource_demands`, true],
  ['admin', 'publish', `${P}.gcs.autoscaler_report`, true],
  ['driver', 'publish', `${P}.gcs.resource_demands`, false],
  ['driver', 'publish', `${P}.gcs.autoscaler_report`, false],
  ['observer', 'publish', `${P}.gcs.autoscaler_report`, false],
  ['node', 'publish', `${P}.gcs.autoscaler_report`, false],
  ['observer', 'publish', `${P}.gcs.autoscaler_status`, true],
  ['driver', 'publish', `${P}.gcs.autoscaler_status`, true],
  ['admin', 'publish', `${P}.gcs.autoscaler_status`, true],
  ['node', 'publish', `${P}.gcs.autoscaler_status`, false],
  ['admin', 'publish', `${P}.raylet.n1.kill_actor`, false],
  // a node registers, beats and serves; it does not act as the GCS nor read drivers' answers
  ['node', 'publish', `${P}.gcs.heartbeat`, true],
  ['node', 'subscribe', `${P}.actor.a1.call`, true],
  ['node', 'subscribe', `${P}.raylet.n1.create_actor`, true],
  ['node', 'publish', `${P}.raylet.n2.create_actor`, false],
  ['node', 'publish', `${P}.gcs.view`, false],
  ['node', 'publish', `${P}.gcs.set_node_taints`, false],
  // worker hosts run user code as node: actors create and call actors (issue 15, part 2), under the
  // calling actor's job — never registering or finishing jobs themselves
  ['node', 'publish', `${P}.gcs.register_actor`, true],
  ['node', 'publish', `${P}.actor.a1.call`, true],
  ['node', 'subscribe', `${P}.events.actor_state`, true],
  ['node', 'publish', `${P}.gcs.register_job`, false],
  ['node', 'publish', `${P}.gcs.finish_job`, false],
  ['node', 'publish', `_INBOX.${c}.gcs.x.1`, true],
  ['node', 'publish', `_INBOX.${c}.driver.x.1`, true],
  ['node', 'publish', `_INBOX.${c}.observer.x.1`, false],
  ['driver', 'publish', `_INBOX.${c}.admin.x.1`, false],
  ['observer', 'publish', `_INBOX.${c}.driver.x.1`, false],
  ['node', 'subscribe', `_INBOX.${c}.driver.x.1`, false],
  // the GCS drives raylets and keeps JetStream; it does not call actors
  ['gcs', 'publish', `${P}.raylet.n1.create_actor`, true],
  ['gcs', 'publish', `${P}.gcs.view`, true],
  ['gcs', 'publish', '$JS.API.STREAM.INFO.KV_orrery', true],
  ['gcs', 'publish', `${P}.actor.a1.call`, false],
  ['gcs', 'subscribe', `${P}.actor.a1.call`, false],
  // no role but the GCS touches JetStream (its tables and its lease)
  ...(['node', 'driver', 'observer', 'admin'] as const).map((r): [Role, 'publish', string, boolean] => [r, 'publish', '$JS.API.STREAM.DELETE.KV_orrery', false]),
  // nothing outside this cluster
  ...ROLES.map((r): [Role, 'publish', string, boolean] => [r, 'publish', 'orrery.other.gcs.list_nodes', false]),
];

for (const [role, op, subject, allowed] of table) {
  test(`${role} ${allowed ? 'may' : 'may not'} ${op} ${subject}`, () => {
    assert.is(may(role, op, subject), allowed);
  });
}

test('each role subscribes its own inbox and no other role\'s', () => {
  for (const role of ROLES) {
    for (const other of ROLES) assert.is(may(role, 'subscribe', `${inboxPrefix(c, other)}.tok.1`), role === other, `${role} on ${other}'s inbox`);
  }
});

test('answers: the GCS may answer every role; a node drivers, admins, the GCS and nodes (actors calling actors); clients answer no one', () => {
  for (const asker of ROLES) {
    const inbox = `${inboxPrefix(c, asker)}.tok.1`;
    assert.ok(may('gcs', 'publish', inbox), `gcs answers ${asker}`);
    assert.is(may('node', 'publish', inbox), ['driver', 'admin', 'gcs', 'node'].includes(asker), `node answers ${asker}`);
    for (const client of ['driver', 'observer', 'admin'] as const) assert.not.ok(may(client, 'publish', inbox), `${client} answers ${asker}`);
  }
});

test('client users of one role: each subscribes only its own inbox; the roles that answer that role reach all of them', () => {
  const mayAs = (user: string, op: 'publish' | 'subscribe', subject: string, role: Role = 'driver'): boolean =>
    rolePermissions(c, role, user)[op].some((pattern) => matches(pattern, subject));
  assert.ok(mayAs('billing', 'subscribe', '_INBOX.prod.driver.billing.tok.1'));
  assert.not.ok(mayAs('billing', 'subscribe', '_INBOX.prod.driver.main.tok.1'), "billing on the main driver's inbox");
  assert.not.ok(mayAs('main', 'subscribe', '_INBOX.prod.driver.billing.tok.1'), "the main driver on billing's inbox");
  assert.not.ok(mayAs('billing', 'subscribe', '_INBOX.prod.driver.>'), 'every driver inbox at once');
  assert.ok(may('node', 'publish', '_INBOX.prod.driver.billing.tok.1'), 'a node answers billing');
  assert.ok(may('gcs', 'publish', '_INBOX.prod.driver.billing.tok.1'), 'the GCS answers billing');
  assert.ok(mayAs('ops', 'subscribe', '_INBOX.prod.observer.ops.x', 'observer'));
  assert.not.ok(may('node', 'publish', '_INBOX.prod.observer.ops.x'), 'a node answers no observer');
});

test.run();
