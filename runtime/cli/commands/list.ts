import { ACTOR_STATES as WIRE_ACTOR_STATES } from '../../../protocols/messages/actor.ts';
import type { ActorInfo, ActorState, ClusterEvent, JobInfo, NodeInfo, PlacementGroupInfo } from '../../client/cluster-info.types.ts';
import type { Cluster } from '../../client/cluster.ts';
import { UsageError, parseArgs, stringFlag } from '../args.ts';
import { addressOf } from '../address.ts';
import { clusterOf, connectForCommand } from '../connection.ts';
import { PLACEMENT_GROUP_COLUMNS, extraLabels, nodeJson, pairs, placementGroupRows, resourceUse, stateColour, table } from '../format.ts';
import type { CliIo } from '../io.ts';
import { untilStopped } from './events.ts';

const FLAGS = { address: 'string', cluster: 'string', json: 'boolean', state: 'string', filter: 'string', limit: 'string', detail: 'boolean', watch: 'boolean' } as const;
const ACTOR_STATES: readonly ActorState[] = WIRE_ACTOR_STATES;
const KINDS = ['nodes', 'actors', 'placement-groups', 'jobs'] as const;
type Kind = (typeof KINDS)[number];
const kindList = `${KINDS.slice(0, -1).join(', ')} or ${KINDS[KINDS.length - 1]}`;

/** What `--filter key=value` can name, per kind (ray list --filter, kubectl get --field-selector). */
const FILTER_KEYS: Readonly<Record<Kind, readonly string[]>> = {
  nodes: ['state', 'name', 'node'],
  actors: ['state', 'node', 'name', 'namespace', 'class'],
  'placement-groups': ['state', 'name', 'namespace', 'strategy'],
  jobs: ['state', 'host', 'name', 'namespace', 'reason'],
};

type Filters = ReadonlyMap<string, readonly string[]>;
type Item = NodeInfo | ActorInfo | PlacementGroupInfo | JobInfo;

/**
 * `orrery list nodes|actors|placement-groups|jobs`:
 * - `--filter key=value[,key=value…]`: items whose key has the value (several values of one key: any
 *   of them; several keys: all of them). Keys: state, node (id or name), name, namespace, class
 *   (actors); state, name, node (nodes); state, name, namespace, strategy (placement groups);
 *   state, host, name, namespace, reason (jobs: RUNNING or FINISHED, and why it finished).
 *   `--state S[,S2]` (actors) is `--filter state=…`, filtered by the GCS.
 * - `--limit N`: at most N rows; stderr says how many there were.
 * - `--detail`: every field of each item, one block per item; `--json`: the items as JSON (nodes
 *   with `taintList`, each taint's effect spelt out).
 * - `--watch`: the list, then each change as it happens (one row, or one JSON line), until Ctrl-C —
 *   like `kubectl get -w`.
 */
export async function list(argv: readonly string[], io: CliIo): Promise<number> {
  const args = parseArgs('list', argv, FLAGS, 1);
  const kind = args.positionals[0];
  if (kind === undefined) throw new UsageError(`list: expected what to list: ${kindList}`);
  if (!(KINDS as readonly string[]).includes(kind)) throw new UsageError(`list: cannot list ${JSON.stringify(kind)}; expected ${kindList}`);
  const k = kind as Kind;
  const address = addressOf('list', args, io.env)!;
  const cluster = clusterOf('list', args, io.env);
  const json = args.flags.json === true;
  const detail = args.flags.detail === true;
  const watch = args.flags.watch === true;
  if (json && detail) throw new UsageError('list: give --json or --detail, not both', '--detail');
  const states = statesOf(stringFlag(args, 'state'));
  if (states !== undefined && k !== 'actors') throw new UsageError('list: --state: only actors are listed by state (use --filter state=… for the others)', '--state');
  const filters = filtersOf(k, stringFlag(args, 'filter'));
  const limit = limitOf(stringFlag(args, 'limit'));

  const client = await connectForCommand(address, cluster, io.access);
  try {
    // subscribed before the list is read, so no change between the two is missed
    const changes: ClusterEvent[] = [];
    let onChange: ((e: ClusterEvent) => void) | undefined;
    let lost: ((code: number) => void) | undefined;
    const lostPromise = new Promise<number>((resolve) => (lost = resolve));
    const live = watch
      ? client.events$.subscribe({
          next: (e) => (onChange ? onChange(e) : changes.push(e)),
          error: (err: unknown) => {
            io.err(`orrery: list: the event stream ended: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
            lost?.(1);
          },
          complete: () => lost?.(1),
        })
      : undefined;
    try {
      const nodeNames = await nodeNamesIfNeeded(client, k, filters);
      const all = (await itemsOf(client, k, states)).filter((item) => matches(k, item, filters, nodeNames));
      const shown = limit === undefined ? all : all.slice(0, limit);
      print(io, k, shown, { json, detail, header: true, nodeNames });
      if (limit !== undefined && all.length > shown.length) io.err(`showing ${shown.length} of ${all.length} ${k} (--limit ${limit})`);
      if (!watch) return 0;
      io.err(`watching ${k} of cluster ${JSON.stringify(cluster)} (Ctrl-C to stop)`);
      const show = (e: ClusterEvent): void => {
        const item = itemOf(k, e);
        if (item === undefined || (states !== undefined && !states.includes((item as ActorInfo).state))) return;
        if (k === 'nodes') nodeNames.set((item as NodeInfo).nodeId, (item as NodeInfo).name);
        if (matches(k, item, filters, nodeNames)) print(io, k, [item], { json, detail, header: false, nodeNames });
      };
      for (const e of changes.splice(0)) show(e);
      onChange = show;
      return await untilStopped(lostPromise, io);
    } finally {
      live?.unsubscribe();
    }
  } finally {
    await client.close();
  }
}

async function itemsOf(client: Cluster, kind: Kind, states: ActorState[] | undefined): Promise<Item[]> {
  if (kind === 'nodes') return client.nodes();
  if (kind === 'placement-groups') return client.placementGroups();
  if (kind === 'jobs') return client.jobs();
  return client.actors(states ? { states } : {});
}

/** The item a change event carries, when it is of this kind. */
function itemOf(kind: Kind, e: ClusterEvent): Item | undefined {
  if (kind === 'nodes') return 'node' in e && e.type.startsWith('node_') ? e.node : undefined;
  if (kind === 'actors') return e.type === 'actor_state' || e.type === 'actor_evicted' ? e.actor : undefined;
  if (kind === 'jobs') return e.type === 'job_started' || e.type === 'job_finished' ? e.job : undefined;
  return e.type === 'placement_group_state' ? e.placementGroup : undefined;
}

/** Node names by id, for `--filter node=NAME` and the placement-group column. */
async function nodeNamesIfNeeded(client: Cluster, kind: Kind, filters: Filters): Promise<Map<string, string>> {
  if (kind === 'nodes' || kind === 'jobs' || (kind === 'actors' && !filters.has('node'))) return new Map();
  return new Map((await client.nodes()).map((n) => [n.nodeId, n.name] as const));
}

function matches(kind: Kind, item: Item, filters: Filters, nodeNames: ReadonlyMap<string, string>): boolean {
  for (const [key, values] of filters) {
    const got = fieldsOf(kind, item, nodeNames)[key] ?? [];
    const wanted = key === 'state' ? values.map((v) => v.toUpperCase()) : values;
    if (!got.some((g) => wanted.includes(key === 'state' ? g.toUpperCase() : g))) return false;
  }
  return true;
}

/** The values an item has for each filter key (a node matches by id or by name). */
function fieldsOf(kind: Kind, item: Item, nodeNames: ReadonlyMap<string, string>): Record<string, string[]> {
  if (kind === 'nodes') {
    const n = item as NodeInfo;
    return { state: [n.state], name: [n.name], node: [n.nodeId, n.name] };
  }
  if (kind === 'actors') {
    const a = item as ActorInfo;
    const node = a.nodeId === undefined ? [] : [a.nodeId, ...(nodeNames.has(a.nodeId) ? [nodeNames.get(a.nodeId)!] : [])];
    return { state: [a.state], node, name: a.name === undefined ? [] : [a.name], namespace: [a.namespace], class: [a.className] };
  }
  if (kind === 'jobs') {
    const j = item as JobInfo;
    return { state: [j.state], host: [j.host], name: j.name === undefined ? [] : [j.name], namespace: [j.namespace], reason: j.endReason === undefined ? [] : [j.endReason] };
  }
  const pg = item as PlacementGroupInfo;
  return { state: [pg.state], name: pg.name === undefined ? [] : [pg.name], namespace: [pg.namespace], strategy: [pg.strategy] };
}

function print(io: CliIo, kind: Kind, items: readonly Item[], opts: { json: boolean; detail: boolean; header: boolean; nodeNames: ReadonlyMap<string, string> }): void {
  if (opts.json) {
    const shaped = kind === 'nodes' ? items.map((n) => nodeJson(n as NodeInfo)) : items;
    // the list as one JSON array; changes under --watch as one JSON object per line
    if (opts.header) io.out(JSON.stringify(shaped, null, 2));
    else for (const item of shaped) io.out(JSON.stringify(item));
    return;
  }
  if (opts.detail) {
    for (const item of items) {
      const shaped = kind === 'nodes' ? nodeJson(item as NodeInfo) : item;
      for (const [key, value] of Object.entries(shaped)) io.out(`${key}: ${typeof value === 'string' ? value : JSON.stringify(value)}`);
      io.out('');
    }
    return;
  }
  const { columns, rows, stateColumn } = rowsOf(kind, items, opts.nodeNames);
  const lines = table(columns, rows, (cell, column) => (column === stateColumn ? stateColour(cell, io.color) : cell));
  for (const line of opts.header ? lines : lines.slice(1)) io.out(line);
}

function rowsOf(kind: Kind, items: readonly Item[], nodeNames: ReadonlyMap<string, string>): { columns: string[]; rows: string[][]; stateColumn: number } {
  if (kind === 'nodes') {
    const rows = (items as NodeInfo[]).map((n) => [n.nodeId, n.name, n.state, resourceUse(n), pairs(extraLabels(n)), pairs(n.taints)]);
    return { columns: ['NODE_ID', 'NAME', 'STATE', 'RESOURCES (used/total)', 'LABELS', 'TAINTS'], rows, stateColumn: 2 };
  }
  if (kind === 'jobs') {
    const rows = (items as JobInfo[]).map((j) => [
      j.jobId,
      j.name ?? '-',
      j.state,
      `${j.host}:${j.pid}`,
      new Date(j.startedAt).toISOString(),
      j.endedAt === undefined ? '-' : new Date(j.endedAt).toISOString(),
      j.state === 'FINISHED' ? `${j.endReason ?? ''}${j.endMessage ? `: ${j.endMessage}` : ''}` : (j.entrypoint ?? ''),
    ]);
    return { columns: ['JOB_ID', 'NAME', 'STATE', 'DRIVER (host:pid)', 'STARTED', 'ENDED', 'DETAIL'], rows, stateColumn: 2 };
  }
  if (kind === 'placement-groups') {
    return { columns: PLACEMENT_GROUP_COLUMNS, rows: placementGroupRows(items as PlacementGroupInfo[], nodeNames), stateColumn: 2 };
  }
  const rows = (items as ActorInfo[]).map((a) => [
    a.actorId,
    a.className,
    a.name ? `${a.namespace}/${a.name}` : '-',
    a.state,
    a.nodeId ?? '-',
    String(a.numRestarts),
    a.deathCause ?? a.pendingReason ?? '',
  ]);
  return { columns: ['ACTOR_ID', 'CLASS', 'NAME', 'STATE', 'NODE_ID', 'RESTARTS', 'DETAIL'], rows, stateColumn: 3 };
}

/** `ALIVE,pending` → the actor states (case-insensitive); an unknown one is a UsageError on --state. */
function statesOf(text: string | undefined): ActorState[] | undefined {
  if (text === undefined) return undefined;
  return [...new Set(text.split(',').map((s) => {
    const state = s.trim().toUpperCase() as ActorState;
    if (!ACTOR_STATES.includes(state)) throw new UsageError(`list: --state: unknown actor state ${JSON.stringify(s.trim())} (expected ${ACTOR_STATES.join(', ')})`, '--state');
    return state;
  }))];
}

/** `state=ALIVE,node=worker-1,state=PENDING` → key → values; keys checked against the kind's. */
function filtersOf(kind: Kind, text: string | undefined): Filters {
  const out = new Map<string, string[]>();
  if (text === undefined) return out;
  for (const part of text.split(',')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part.trim() : part.slice(0, eq).trim();
    const value = eq < 0 ? '' : part.slice(eq + 1).trim();
    if (eq < 0 || key === '' || value === '') throw new UsageError(`list: --filter: expected key=value[,key=value…], got ${JSON.stringify(part)}`, '--filter');
    if (!FILTER_KEYS[kind].includes(key)) throw new UsageError(`list: --filter: ${kind} cannot be filtered by ${JSON.stringify(key)} (expected ${FILTER_KEYS[kind].join(', ')})`, '--filter');
    out.set(key, [...(out.get(key) ?? []), value]);
  }
  return out;
}

function limitOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`list: --limit: expected a whole number of at least 1, got ${JSON.stringify(text)}`, '--limit');
  return n;
}
