// Small formatting helpers and a tag function for building DOM without string HTML.

/** `h('div', { class: 'x', onclick }, child, …)`: an element; strings become text nodes. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export const shortId = (id) => (id ? String(id).slice(0, 8) : '');

export function clock(ms) {
  const d = new Date(ms);
  return d.toLocaleTimeString([], { hour12: false, hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function clockMs(ms) {
  return `${clock(ms)}.${String(new Date(ms).getMilliseconds()).padStart(3, '0')}`;
}

const BYTES = new Set(['memory', 'object_store_memory']);

export function amount(name, value) {
  const v = Math.round(value * 10_000) / 10_000;
  if (!BYTES.has(name)) return String(v);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let x = v;
  let u = 0;
  while (x >= 1024 && u < units.length - 1) {
    x /= 1024;
    u++;
  }
  return `${Number.isInteger(x) ? x : x.toFixed(1)}${units[u]}`;
}

/** Labels every node has and that the card shows elsewhere. */
export const BUILTIN_PREFIX = 'orrery.io/';

const pairs = (rec) => Object.entries(rec ?? {}).map(([k, v]) => `${k}=${v}`).join(', ') || '–';

/** One line about a cluster event, as the feed shows it. */
export function describeEvent(e, nodeName) {
  switch (e.type) {
    case 'node_added': return `node ${e.node.name} joined (${Object.entries(e.node.resources.total).map(([k, v]) => `${k} ${amount(k, v)}`).join(', ')})`;
    case 'node_dead': return `node ${e.node.name} is DEAD`;
    case 'node_draining': return `node ${e.node.name} is draining`;
    case 'node_alive': return `node ${e.node.name} stopped draining`;
    case 'node_labels_changed': return `node ${e.node.name} labels: ${pairs(Object.fromEntries(Object.entries(e.node.labels).filter(([k]) => !k.startsWith(BUILTIN_PREFIX))))}`;
    case 'node_taints_changed': return `node ${e.node.name} taints: ${pairs(e.node.taints)}`;
    case 'actor_state': {
      const a = e.actor;
      const where = a.nodeId ? ` on ${nodeName(a.nodeId)}` : '';
      const extra = a.state === 'DEAD' && a.deathCause ? ` — ${a.deathCause}` : a.state === 'RESTARTING' ? ` (restart ${a.numRestarts + 1})` : '';
      return `${a.name ?? a.className} ${shortId(a.actorId)} → ${a.state}${where}${extra}`;
    }
    case 'actor_evicted': return `${e.actor.name ?? e.actor.className} ${shortId(e.actor.actorId)} evicted: ${e.message}`;
    case 'schedule_failed': return `${e.target.kind} ${e.target.name ?? shortId(e.target.id)} cannot be placed: ${e.message}`;
    case 'placement_group_state': return `placement group ${e.placementGroup.name ?? shortId(e.placementGroup.id)} → ${e.placementGroup.state}`;
    case 'job_started': return `job ${e.job.name ?? shortId(e.job.jobId)} started: pid ${e.job.pid} on ${e.job.host}`;
    case 'job_finished': return `job ${e.job.name ?? shortId(e.job.jobId)} finished (${e.job.endReason ?? 'ended'})${e.job.endMessage ? ` — ${e.job.endMessage}` : ''}`;
    case 'gcs_leader': return `GCS: ${e.message}`;
    // the autoscaler's events (issue 16): its node type and its own one-line message
    case 'node_launch_requested': case 'node_launched': case 'node_launch_failed':
    case 'node_drained': case 'node_terminated': case 'demand_infeasible': return `autoscaler ${e.nodeType}: ${e.message}`;
    default: return e.type;
  }
}

export function stateClass(state) {
  return String(state ?? '').replace(/[^A-Za-z_]/g, '');
}

/**
 * The summary's GCS tile from /api/gcs: "serving", or a recovery — the nodes back of those expected
 * and the longest it still waits — marked as a warning; null before the first answer.
 */
export function gcsSummary(s) {
  if (!s) return null;
  if (s.state !== 'RECOVERING' || !s.recovering) return { value: s.state.toLowerCase(), cls: s.state === 'SERVING' ? '' : 'warn' };
  const r = s.recovering;
  const left = r.phase === 'WAITING' ? `, ≤ ${(r.graceLeftMs / 1000).toFixed(1)} s` : ', reconciling';
  return { value: `recovering: ${r.nodesBack}/${r.nodesExpected} nodes back${left}`, cls: 'warn' };
}
