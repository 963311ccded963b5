// The cluster view: node cards (labels, taints, resource bars, their actors, taint and label
// controls), the actor and placement-group tables, and the live event feed.
import { api, follow } from './api.js';
import { timeCharts } from './charts.js';
import { BUILTIN_PREFIX, amount, clock, describeEvent, gcsSummary, h, shortId, stateClass } from './format.js';

const FEED_MAX = 300;
/** Resource use changes without events (tasks); the view is also refreshed this often. */
const POLL_MS = 5000;

export function clusterView({ toast, onConnection, openActor, readOnly = () => false }) {
  const state = { nodes: [], actors: [], pgs: [], events: [], lastSeq: 0, drafts: new Map() };
  // the actors table: filters (state, node, namespace) and pages of PAGE_SIZE rows
  const PAGE_SIZE = 50;
  const table = { state: 'live', node: '', namespace: '', page: 0 };
  const $ = (id) => document.getElementById(id);
  let charts;
  let refreshTimer;
  let refreshing = false;
  let again = false;

  const nodeName = (id) => state.nodes.find((n) => n.nodeId === id)?.name ?? shortId(id);

  async function refresh() {
    if (refreshing) {
      again = true;
      return;
    }
    refreshing = true;
    try {
      // answered at once: while a restarted GCS recovers, the lists below wait for it, and the
      // summary says why meanwhile (asked beside them, so a GCS from before /api/gcs delays nothing)
      askGcs();
      const [nodes, actors, pgs] = await Promise.all([api.nodes(), api.actors(), api.placementGroups()]);
      // the lists were answered: a recovery that was under way is over
      if (state.gcs?.state === 'RECOVERING') askGcs();
      Object.assign(state, { nodes, actors, pgs });
      render();
    } catch (err) {
      onConnection('offline', err.message);
    } finally {
      refreshing = false;
      if (again) {
        again = false;
        void refresh();
      }
    }
  }

  /** What the GCS is doing, into the summary; one question at a time, none of its failures shown (the lists report an outage). */
  let askingGcs = false;
  function askGcs() {
    if (askingGcs) return;
    askingGcs = true;
    api.gcs().then(
      (s) => {
        state.gcs = s;
        renderSummary();
      },
      () => {
        state.gcs = undefined;
      },
    ).finally(() => (askingGcs = false));
  }

  const soon = () => {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refresh, 120);
  };

  function render() {
    renderSummary();
    renderNodes();
    renderActors();
    renderPlacementGroups();
  }

  function renderSummary() {
    const alive = state.nodes.filter((n) => n.state === 'ALIVE').length;
    const by = (s) => state.actors.filter((a) => a.state === s).length;
    const pending = by('PENDING') + by('RESTARTING');
    const failures = state.events.filter((e) => e.type === 'schedule_failed').length;
    const stat = (label, value, cls = '') => h('div', { class: `stat ${cls}` }, h('div', { class: 'label' }, label), h('div', { class: 'value' }, value));
    const gcs = gcsSummary(state.gcs);
    $('summary').replaceChildren(
      ...(gcs ? [stat('GCS', gcs.value, gcs.cls)] : []),
      stat('Nodes alive', `${alive} / ${state.nodes.length}`),
      stat('Actors alive', by('ALIVE')),
      stat('Pending / restarting', pending, pending ? 'warn' : ''),
      stat('Dead actors', by('DEAD')),
      stat('Placement groups', state.pgs.length),
      stat('Schedule failures', failures, failures ? 'bad' : ''),
    );
  }

  function renderNodes() {
    const grid = $('nodes');
    if (state.nodes.length === 0) {
      grid.replaceChildren(h('p', { class: 'empty' }, 'No nodes have joined this cluster yet.'));
      return;
    }
    const order = { ALIVE: 0, DRAINING: 1, DEAD: 2 };
    const nodes = [...state.nodes].sort((a, b) => order[a.state] - order[b.state] || a.name.localeCompare(b.name));
    // what is being typed into a card's forms (state.drafts) survives the re-render, focus too
    const focused = document.activeElement?.closest?.('.mini-form') ? { node: document.activeElement.closest('.node-card').dataset.nodeId, name: document.activeElement.name } : undefined;
    grid.replaceChildren(...nodes.map(nodeCard));
    if (focused) grid.querySelector(`.node-card[data-node-id="${CSS.escape(focused.node)}"] .mini-form input[name="${focused.name}"]`)?.focus();
  }

  function nodeCard(node) {
    const actors = state.actors.filter((a) => a.nodeId === node.nodeId && (a.state === 'ALIVE' || a.state === 'SCHEDULED'));
    const userLabels = Object.entries(node.labels).filter(([k]) => !k.startsWith(BUILTIN_PREFIX));
    const builtins = Object.entries(node.labels).filter(([k]) => k.startsWith(BUILTIN_PREFIX) && k !== 'orrery.io/node-id' && k !== 'orrery.io/node-name');
    const live = node.state !== 'DEAD';
    // the taint and label controls: on live nodes, unless the dashboard is read-only
    const writable = live && !readOnly();
    const taints = Object.entries(node.taints);
    return h('article', { class: 'node-card', 'data-node-id': node.nodeId, 'data-node-name': node.name, 'data-state': node.state },
      h('div', { class: 'node-head' },
        h('div', {}, h('div', { class: 'node-name' }, node.name), h('div', { class: 'node-id', title: node.nodeId }, node.nodeId)),
        h('span', { class: `badge ${node.state}` }, node.state)),
      h('div', { class: 'bars' }, ...resourceBars(node)),
      h('div', {},
        h('div', { class: 'sub' }, 'Labels'),
        h('div', { class: 'chips labels' },
          userLabels.map(([k, v]) => h('span', { class: 'chip label', 'data-label': k }, `${k}=${v}`,
            writable && h('button', { class: 'x', type: 'button', title: `Remove label ${k}`, 'aria-label': `Remove label ${k}`, onclick: () => change(() => api.removeLabel(node.nodeId, k), `label ${k} removed from ${node.name}`) }, '×'))),
          builtins.map(([k, v]) => h('span', { class: 'chip builtin', title: 'built-in label' }, `${k.slice(BUILTIN_PREFIX.length)}=${v}`)),
          userLabels.length + builtins.length === 0 && h('span', { class: 'none' }, 'none'))),
      h('div', {},
        h('div', { class: 'sub' }, 'Taints'),
        h('div', { class: 'chips taints' },
          taints.map(([k, v]) => h('span', { class: `chip taint ${v.endsWith(':NoExecute') ? 'NoExecute' : ''}`, 'data-taint': k, title: taintTitle(v) }, `${k}=${v}`,
            writable && h('button', { class: 'x', type: 'button', title: `Remove taint ${k}`, 'aria-label': `Remove taint ${k}`, onclick: () => change(() => api.removeTaint(node.nodeId, k), `taint ${k} removed from ${node.name}`) }, '×'))),
          taints.length === 0 && h('span', { class: 'none' }, 'none'))),
      h('div', {},
        h('div', { class: 'sub' }, `Actors (${actors.length})`),
        h('div', { class: 'node-actors' },
          actors.map((a) => h('span', { class: 'actor-pill', 'data-actor-id': a.actorId, title: `${a.className} ${a.actorId} ${a.state}`, onclick: () => openActor(a.actorId) },
            h('span', { class: `dot ${a.state}` }), a.name ?? `${a.className} ${shortId(a.actorId)}`)),
          actors.length === 0 && h('span', { class: 'none' }, 'none'))),
      writable && h('div', { class: 'node-forms' },
        pairForm(node.nodeId, 'taint', 'key=value[:Effect]', (k, v) => change(() => api.addTaints(node.nodeId, { [k]: v }), `taint ${k}=${v} added to ${node.name}`)),
        pairForm(node.nodeId, 'label', 'key=value', (k, v) => change(() => api.addLabels(node.nodeId, { [k]: v }), `label ${k}=${v} set on ${node.name}`))),
    );
  }

  function resourceBars(node) {
    const names = Object.keys(node.resources.total).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
    return names.map((name) => {
      const total = node.resources.total[name];
      const used = Math.max(0, total - (node.resources.available[name] ?? 0));
      const pct = total > 0 ? Math.min(100, (used / total) * 100) : 0;
      return h('div', { class: 'bar-row', 'data-resource': name },
        h('span', { class: 'bar-name', title: name }, name),
        h('div', { class: `bar ${pct >= 100 ? 'full' : ''}` }, h('span', { style: `width:${pct}%` })),
        h('span', { class: 'bar-num' }, `${amount(name, used)}/${amount(name, total)}`));
    });
  }

  /** `key=value` in one input; the part after the first '=' is the value (it may carry `:Effect`). */
  function pairForm(nodeId, kind, placeholder, submit) {
    const draft = `${nodeId}/${kind}`;
    const input = h('input', { name: kind, placeholder, 'aria-label': `${kind} to add`, autocomplete: 'off', spellcheck: 'false', oninput: (e) => state.drafts.set(draft, e.target.value) });
    input.value = state.drafts.get(draft) ?? '';
    return h('form', { class: `mini-form ${kind}-form`, onsubmit: (e) => {
      e.preventDefault();
      const text = input.value.trim();
      const eq = text.indexOf('=');
      if (eq <= 0) {
        toast(`Write the ${kind} as ${placeholder}`, true);
        return;
      }
      state.drafts.delete(draft);
      void submit(text.slice(0, eq).trim(), text.slice(eq + 1).trim()).then((ok) => {
        if (ok) return;
        state.drafts.set(draft, text);
        renderNodes();
      });
    } }, input, h('button', { type: 'submit' }, `+ ${kind}`));
  }

  async function change(run, message) {
    try {
      await run();
      toast(message);
      await refresh();
      return true;
    } catch (err) {
      toast(`${err.message} [${err.code}]`, true);
      return false;
    }
  }

  function wireActorFilters() {
    const changed = (key, value) => {
      table[key] = value;
      table.page = 0;
      renderActors();
    };
    $('actor-state').onchange = (e) => changed('state', e.target.value);
    $('actor-node').onchange = (e) => changed('node', e.target.value);
    $('actor-namespace').oninput = (e) => changed('namespace', e.target.value.trim());
    $('actor-prev').onclick = () => ((table.page = Math.max(0, table.page - 1)), renderActors());
    $('actor-next').onclick = () => ((table.page += 1), renderActors());
  }

  function renderActorFilters() {
    const select = $('actor-node');
    const options = [['', 'all'], ...state.nodes.map((n) => [n.nodeId, n.name])];
    if (select.options.length !== options.length || options.some(([v], i) => select.options[i]?.value !== v)) {
      select.replaceChildren(...options.map(([value, text]) => h('option', { value }, text)));
      select.value = options.some(([v]) => v === table.node) ? table.node : '';
    }
  }

  function renderActors() {
    const rank = { PENDING: 0, RESTARTING: 1, SCHEDULED: 2, DEPENDENCIES_UNREADY: 3, ALIVE: 4, DEAD: 5 };
    renderActorFilters();
    const shown = state.actors.filter((a) =>
      (table.state === '' || (table.state === 'live' ? a.state !== 'DEAD' : a.state === table.state)) &&
      (table.node === '' || a.nodeId === table.node) &&
      (table.namespace === '' || a.namespace === table.namespace));
    const actors = shown.sort((a, b) => rank[a.state] - rank[b.state] || a.className.localeCompare(b.className) || a.actorId.localeCompare(b.actorId));
    $('actor-count').textContent = actors.length === state.actors.length ? String(actors.length) : `${actors.length} of ${state.actors.length}`;
    const pages = Math.max(1, Math.ceil(actors.length / PAGE_SIZE));
    table.page = Math.min(table.page, pages - 1);
    const first = table.page * PAGE_SIZE;
    const page = actors.slice(first, first + PAGE_SIZE);
    $('actor-page').textContent = actors.length === 0 ? '0 of 0' : `${first + 1}–${first + page.length} of ${actors.length}`;
    $('actor-prev').disabled = table.page === 0;
    $('actor-next').disabled = table.page >= pages - 1;
    const body = document.querySelector('#actors tbody');
    if (actors.length === 0) {
      body.replaceChildren(h('tr', {}, h('td', { colspan: 7, class: 'empty' }, state.actors.length === 0 ? 'No actors yet.' : 'No actor matches these filters.')));
      return;
    }
    body.replaceChildren(...page.map((a) => h('tr', { 'data-actor-id': a.actorId, 'data-state': a.state },
      h('td', {}, h('div', {}, a.name ?? h('span', { class: 'secondary' }, 'unnamed')), h('div', { class: 'mono secondary' }, a.actorId)),
      h('td', {}, a.className),
      h('td', {}, h('span', { class: `badge ${stateClass(a.state)}` }, a.state)),
      h('td', {}, a.nodeId ? nodeName(a.nodeId) : '–'),
      h('td', {}, String(a.numRestarts)),
      a.pendingReason && (a.state === 'PENDING' || a.state === 'RESTARTING') ? h('td', { class: 'reason' }, a.pendingReason)
        : h('td', { class: 'secondary wrap' }, a.deathCause ?? Object.entries(a.labels).filter(([k]) => !k.startsWith(BUILTIN_PREFIX)).map(([k, v]) => `${k}=${v}`).join(', ')),
      h('td', {}, h('button', { class: 'link-btn', type: 'button', onclick: () => openActor(a.actorId) }, 'Step through')),
    )));
  }

  function renderPlacementGroups() {
    $('pg-count').textContent = String(state.pgs.length);
    const body = document.querySelector('#placement-groups tbody');
    if (state.pgs.length === 0) {
      body.replaceChildren(h('tr', {}, h('td', { colspan: 5, class: 'empty' }, 'No placement groups.')));
      return;
    }
    body.replaceChildren(...state.pgs.map((pg) => h('tr', { 'data-pg-id': pg.id },
      h('td', {}, h('div', {}, pg.name ?? h('span', { class: 'secondary' }, 'unnamed')), h('div', { class: 'mono secondary' }, pg.id)),
      h('td', {}, pg.strategy),
      h('td', {}, h('span', { class: `badge ${stateClass(pg.state)}` }, pg.state)),
      h('td', {}, pg.bundles.map((b) => h('div', { class: 'mono' }, `#${b.index} ${Object.entries(b.resources).map(([k, v]) => `${k} ${amount(k, v)}`).join(', ')}${b.nodeId ? ` → ${nodeName(b.nodeId)}` : ''}`))),
      h('td', { class: pg.pendingReason ? 'reason' : 'secondary' }, pg.pendingReason ?? pg.removedCause ?? ''),
    )));
  }

  function pushEvent(e, fresh) {
    if (e.seq !== undefined) {
      if (e.seq <= state.lastSeq) return;
      state.lastSeq = e.seq;
    }
    state.events.push(e);
    if (state.events.length > FEED_MAX) state.events.shift();
    if (fresh) charts?.record(e);
    const item = h('li', { class: `${e.type} ${fresh ? 'fresh' : ''}`, 'data-type': e.type },
      h('span', { class: 'time', title: new Date(e.time).toISOString() }, clock(e.time)),
      h('span', { class: 'kind' }, e.type.replace(/_/g, ' ')),
      h('span', { class: 'text' }, describeEvent(e, nodeName)));
    const feed = $('feed');
    feed.prepend(item);
    while (feed.children.length > FEED_MAX) feed.lastChild.remove();
  }

  async function start() {
    wireActorFilters();
    charts = timeCharts($('charts'), () => state);
    const pending = [];
    let joined = false;
    follow('/api/events/stream', 'cluster', (e) => {
      if (!joined) pending.push(e);
      else {
        pushEvent(e, true);
        soon();
      }
    }, (s) => {
      $('feed-live').classList.toggle('off', s !== 'live');
      $('feed-live').textContent = s === 'live' ? 'live' : 'reconnecting';
      onConnection(s === 'live' ? 'live' : 'offline');
      if (s === 'live') soon();
    });
    await refresh();
    try {
      const recent = await api.events(200);
      for (const e of recent.events) pushEvent(e, false);
      state.lastSeq = Math.max(state.lastSeq, recent.lastSeq);
    } catch (err) {
      toast(`events: ${err.message}`, true);
    }
    joined = true;
    for (const e of pending.splice(0)) pushEvent(e, true);
    renderSummary();
    charts.start();
    setInterval(refresh, POLL_MS);
  }

  return { start, actors: () => state.actors, nodeName };
}

function rank(resource) {
  return ['CPU', 'GPU', 'memory', 'object_store_memory'].indexOf(resource) >>> 0;
}

function taintTitle(value) {
  const effect = value.includes(':') ? value.slice(value.lastIndexOf(':') + 1) : 'NoSchedule';
  return `${effect}: ${effect === 'NoExecute' ? 'keeps new work off and moves running actors that do not tolerate it' : effect === 'PreferNoSchedule' ? 'avoided when another node will do' : 'keeps new work off this node'}`;
}
