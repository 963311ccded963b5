import { ROOT, assertToken, GcsVerb, RayletVerb } from '../../protocols/subjects.ts';
import { batchSubject, watchSubject } from '../../protocols/inspect-subjects.ts';
import { codeStoreReadSubjects, codeStoreWriteSubjects } from '../../protocols/code-store.ts';

/**
 * The roles of a secured cluster and what each may publish and subscribe on NATS. The NATS server
 * enforces these lists (nats-server.conf written by `orrery auth init`); this module is their one
 * source, and docs/security.md's table is printed from it (`rolePermissions`).
 *
 * Each role has its own inbox space, `_INBOX.<cluster>.<role>`, and each client user (driver,
 * observer, admin) its own prefix in it, `_INBOX.<cluster>.<role>.<user>` — `main` for the user
 * `orrery auth init` makes, a name of its own for each one `orrery auth add` makes. A connection may
 * subscribe only under its own prefix: no role can read the answers sent to another role, and no
 * client the answers sent to another client. A role that answers requests may publish to
 * the inboxes of the roles that send them, by name — not through NATS's `allow_responses`, which
 * makes the server record the reply subject of every message it delivers to the answering
 * connection: measured, that halved actor-call throughput (docs/benchmarks.md, "Authentication").
 */
export const ROLES = ['gcs', 'node', 'driver', 'observer', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export interface RolePermissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
}

export const ROLE_SUMMARY: Readonly<Record<Role, string>> = {
  gcs: 'the control plane: serves the GCS verbs, drives raylets, keeps its tables in JetStream',
  node: 'raylets and their worker hosts: register, heartbeat, serve actor calls and tasks',
  driver: 'creates and calls actors, tasks and placement groups; reads state and events',
  observer: 'read-only: status, list, events, inspection, the dashboard’s reads',
  admin: 'a driver that may also label, taint and drain nodes; the autoscaler',
};

/** GCS verbs a role may request (the GCS serves them all). */
const READ_VERBS: readonly GcsVerb[] = ['get_actor', 'list_nodes', 'list_actors', 'list_placement_groups', 'get_pg', 'list_events', 'explain', 'autoscaler_status', 'list_jobs', 'gcs_status'];
/** A driver's connection is a job (docs/jobs.md): it registers, heartbeats and finishes it (the GCS checks the job's secret). */
const DRIVER_VERBS: readonly GcsVerb[] = [...READ_VERBS, 'register_actor', 'kill_actor', 'create_pg', 'remove_pg', 'register_job', 'job_heartbeat', 'finish_job'];
/** The autoscaler runs as admin: it reads the demands, reports, and drains the nodes it terminates. */
const ADMIN_VERBS: readonly GcsVerb[] = [...DRIVER_VERBS, 'set_node_labels', 'set_node_taints', 'drain_node', 'resource_demands', 'autoscaler_report'];
/**
 * Raylets, and the worker hosts that run user code on them: actors and tasks create actors and
 * groups, look up and kill actors through connect() inside the worker (docs/jobs.md) — under the
 * job of the calling actor, so not the job verbs themselves.
 */
const NODE_VERBS: readonly GcsVerb[] = [
  'register_node',
  'register_running',
  'heartbeat',
  'unregister_node',
  'actor_died',
  'view_snapshot',
  // what `orrery status` shows (the autoscaler's report, the GCS's own state) no node needs
  ...READ_VERBS.filter((v) => v !== 'autoscaler_status' && v !== 'gcs_status'),
  'register_actor',
  'kill_actor',
  'create_pg',
  'remove_pg',
];
/** Raylet verbs only the GCS sends. */
const CONTROL_VERBS: readonly RayletVerb[] = ['create_actor', 'kill_actor', 'prepare_bundle', 'commit_bundle', 'cancel_bundle'];

/** The GCS verbs a role may request — what its permissions let it publish on `gcs.<verb>`. */
export function gcsVerbsOf(role: Role): readonly GcsVerb[] {
  switch (role) {
    case 'gcs':
      return [];
    case 'node':
      return NODE_VERBS;
    case 'driver':
      return DRIVER_VERBS;
    case 'observer':
      return READ_VERBS;
    case 'admin':
      return ADMIN_VERBS;
  }
}

/**
 * The role whose inbox a reply subject is in (`_INBOX.<cluster>.<role>.…`), or undefined for any
 * other reply subject (an unsecured cluster's connections use plain `_INBOX.`). On a secured cluster
 * a connection can subscribe only under its own role's inbox, so a request that names another
 * role's inbox could never read its answer: the inbox says who sent it.
 */
export function inboxRole(cluster: string, reply: string | undefined): Role | undefined {
  if (reply === undefined) return undefined;
  const head = `_INBOX.${cluster}.`;
  if (!reply.startsWith(head)) return undefined;
  const end = reply.indexOf('.', head.length);
  const role = reply.slice(head.length, end === -1 ? undefined : end);
  return isRole(role) ? role : undefined;
}

/** The roles whose users are clients, each with an inbox of its own (`orrery auth add`). */
export const CLIENT_ROLES = ['driver', 'observer', 'admin'] as const satisfies readonly Role[];
export type ClientRole = (typeof CLIENT_ROLES)[number];
/** The client user `orrery auth init` makes for each client role. */
export const MAIN_USER = 'main';

export function isClientRole(role: Role): role is ClientRole {
  return (CLIENT_ROLES as readonly Role[]).includes(role);
}

/** Every inbox of a role's users: what the roles that answer it may publish to. */
export function roleInboxes(cluster: string, role: Role): string {
  return `_INBOX.${assertToken('cluster', cluster)}.${role}`;
}

/**
 * Where one user's answers arrive: `_INBOX.<cluster>.<role>` for the gcs and node roles (their
 * processes are one trust domain), `_INBOX.<cluster>.<role>.<user>` for a client user.
 */
export function inboxPrefix(cluster: string, role: Role, user: string = MAIN_USER): string {
  return isClientRole(role) ? `${roleInboxes(cluster, role)}.${assertToken('user', user)}` : roleInboxes(cluster, role);
}

export function rolePermissions(cluster: string, role: Role, user: string = MAIN_USER): RolePermissions {
  const p = `${ROOT}.${assertToken('cluster', cluster)}`;
  const gcs = (verbs: readonly GcsVerb[]) => verbs.map((v) => `${p}.gcs.${v}`);
  const inbox = `${inboxPrefix(cluster, role, user)}.>`;
  const inspectRead = [`${p}.inspect.>`, batchSubject(cluster), `${watchSubject(cluster)}.*`];
  switch (role) {
    case 'gcs':
      return {
        publish: [
          `${p}.gcs.view`,
          `${p}.events.>`,
          ...CONTROL_VERBS.map((v) => `${p}.raylet.*.${v}`),
          `${p}.inspect.>`,
          batchSubject(cluster),
          // its tables and its leader lease live in JetStream key-value buckets
          '$JS.API.>',
          '$KV.>',
          '$JS.ACK.>',
          '$JS.FC.>',
          // its answers: every role asks the GCS; and inspection acknowledgements to watchers
          `_INBOX.${assertToken('cluster', cluster)}.>`,
          `${watchSubject(cluster)}.*`,
        ],
        // the raylets' load reports, which it folds into the view
        subscribe: [`${p}.gcs.*`, `${p}.raylet.*.load`, watchSubject(cluster), inbox],
      };
    case 'node':
      return {
        publish: [
          ...gcs(NODE_VERBS),
          `${p}.raylet.*.load`,
          `${p}.raylet.*.submit_task`,
          `${p}.raylet.*.cancel_task`,
          // actors calling actors, tasks pushed to leases, from inside a worker
          `${p}.actor.*.call`,
          `${p}.events.schedule_failed`,
          `${p}.events.lease_revoked`,
          `${p}.inspect.>`,
          batchSubject(cluster),
          // its answers: actor calls and tasks (drivers, admins), raylet verbs (the GCS), and
          // inspection acknowledgements to watchers; never an observer's inbox
          `${roleInboxes(cluster, 'driver')}.>`,
          `${roleInboxes(cluster, 'admin')}.>`,
          `${roleInboxes(cluster, 'gcs')}.>`,
          `${roleInboxes(cluster, 'node')}.>`,
          `${watchSubject(cluster)}.*`,
          // shipped code: fetch from the code store, never write it (protocols/code-store.ts)
          ...codeStoreReadSubjects(cluster),
        ],
        // events: a handle inside a worker follows its actor's state, as a driver's does
        subscribe: [`${p}.raylet.*.*`, `${p}.gcs.view`, `${p}.actor.*.call`, `${p}.events.>`, watchSubject(cluster), inbox],
      };
    case 'driver':
      return {
        // and ship the code of the actors and tasks it creates (protocols/code-store.ts)
        publish: [...gcs(DRIVER_VERBS), `${p}.raylet.*.submit_task`, `${p}.raylet.*.cancel_task`, `${p}.actor.*.call`, ...codeStoreWriteSubjects(cluster)],
        subscribe: [`${p}.events.>`, inbox],
      };
    case 'observer':
      return {
        publish: [...gcs(READ_VERBS), watchSubject(cluster)],
        subscribe: [`${p}.events.>`, ...inspectRead, inbox],
      };
    case 'admin':
      return {
        publish: [...gcs(ADMIN_VERBS), `${p}.raylet.*.submit_task`, `${p}.raylet.*.cancel_task`, `${p}.actor.*.call`, watchSubject(cluster), ...codeStoreWriteSubjects(cluster)],
        subscribe: [`${p}.events.>`, ...inspectRead, inbox],
      };
  }
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** The roles as a Markdown table (docs/security.md holds it; a spec checks the two agree). */
export function rolesTable(cluster: string): string {
  const cell = (subjects: readonly string[]) => subjects.map((s) => `\`${s}\``).join('<br>');
  const rows = ROLES.map((role) => {
    const p = rolePermissions(cluster, role);
    return `| \`${role}\` | ${ROLE_SUMMARY[role]} | ${cell(p.publish)} | ${cell(p.subscribe)} |`;
  });
  return ['| role | who | may publish | may subscribe |', '| --- | --- | --- | --- |', ...rows].join('\n');
}
