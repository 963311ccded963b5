// The step-through view: pick a machine instance (live from the inspection stream, or from a
// loaded trace file), see its statechart with the current state highlighted and its context, and
// move through its transitions with back / forward / play and a scrubber.
import { api, follow } from './api.js';
import { clock, clockMs, h, shortId } from './format.js';

const PLAY_MS = 700;
const TIMELINE_WINDOW = 150;
/** Live transitions kept per instance (heartbeating machines make two a second). */
const LIVE_KEEP = 2000;
const PLAY_ICON = '<svg viewBox="0 0 16 16" width="13" height="13" aria-hidden="true"><path d="M4 3v10l8-5z" fill="currentColor"/></svg>';
const PAUSE_ICON = '<svg viewBox="0 0 16 16" width="13" height="13" aria-hidden="true"><path d="M4 3h3v10H4zM9 3h3v10H9z" fill="currentColor"/></svg>';
const MACHINE_ORDER = ['gcs', 'node', 'raylet', 'actor', 'placement_group', 'autoscaler'];
const MACHINE_TITLE = { gcs: 'GCS', node: 'Nodes', raylet: 'Raylets', actor: 'Actors', placement_group: 'Placement groups' };

export function stepView({ toast, describeActor, describeNode }) {
  const $ = (id) => document.getElementById(id);
  const sources = { live: new Map(), trace: new Map() };
  const charts = new Map();
  const view = { source: 'live', key: undefined, index: 0, following: true, playing: undefined, showHeartbeats: false, available: { live: false, trace: false } };

  const keyOf = (r) => `${r.machine}/${r.id}`;
  const all = () => (view.key ? sources[view.source].get(view.key) ?? [] : []);
  // a raylet beats twice a second: its heartbeat transitions are folded away unless asked for
  const records = () => (view.showHeartbeats ? all() : all().filter((r) => !r.heartbeat));

  function add(source, r) {
    const map = sources[source];
    let list = map.get(keyOf(r));
    if (!list) map.set(keyOf(r), (list = []));
    if (list.length > 0 && list[list.length - 1].seq >= r.seq) {
      if (list.some((x) => x.seq === r.seq)) return false;
      list.push(r);
      list.sort((a, b) => a.seq - b.seq);
    } else list.push(r);
    if (source === 'live' && list.length > LIVE_KEEP) {
      const cut = list.length - LIVE_KEEP;
      list.splice(0, cut);
      if (view.key === keyOf(r) && !view.following) view.index = Math.max(0, view.index - cut);
    }
    return true;
  }

  function label(machine, id, list) {
    const ctx = list[list.length - 1]?.context ?? {};
    if (machine === 'actor') return describeActor(id) ?? ctx.name ?? ctx.className ?? `actor ${shortId(id)}`;
    if (machine === 'node' || machine === 'raylet') return describeNode(id) ?? ctx.name ?? `${machine} ${shortId(id)}`;
    if (machine === 'gcs') return 'GCS';
    return ctx.name ?? `${machine} ${shortId(id)}`;
  }

  function renderInstances() {
    const filter = $('instance-filter').value.trim().toLowerCase();
    const groups = new Map();
    for (const [key, list] of sources[view.source]) {
      const { machine, id } = list[0];
      const name = label(machine, id, list);
      if (filter && !`${machine} ${id} ${name}`.toLowerCase().includes(filter)) continue;
      if (!groups.has(machine)) groups.set(machine, []);
      groups.get(machine).push({ key, machine, id, name, state: list[list.length - 1].to, count: list.length });
    }
    const out = [];
    for (const machine of [...groups.keys()].sort((a, b) => (MACHINE_ORDER.indexOf(a) >>> 0) - (MACHINE_ORDER.indexOf(b) >>> 0))) {
      out.push(h('div', { class: 'instance-group' }, MACHINE_TITLE[machine] ?? machine));
      for (const i of groups.get(machine).sort((a, b) => a.name.localeCompare(b.name))) {
        out.push(h('button', { type: 'button', class: `instance ${i.key === view.key ? 'selected' : ''}`, 'data-machine': i.machine, 'data-id': i.id, onclick: () => select(i.key) },
          h('span', { class: 'iname' }, i.name), h('span', { class: 'iid' }, `${shortId(i.id)} · ${i.count} transitions`), h('span', { class: 'istate' }, i.state)));
      }
    }
    if (out.length === 0) {
      out.push(h('p', { class: 'empty' }, view.source === 'live'
        ? (view.available.live ? 'No transitions seen yet. Machines appear here as they change state.' : 'Live inspection is not available.')
        : (view.available.trace ? 'The trace has no records.' : 'No trace file is loaded (orrery dashboard --trace FILE).')));
    }
    $('instance-list').replaceChildren(...out);
  }

  async function chartOf(machine) {
    if (!charts.has(machine)) charts.set(machine, api.statechart(machine).catch(() => undefined));
    return charts.get(machine);
  }

  async function renderChart(list, current) {
    const machine = list[0]?.machine;
    const chart = $('chart');
    if (!machine) return;
    if (chart.dataset.machine !== machine || chart.dataset.key !== view.key) {
      chart.dataset.machine = machine;
      chart.dataset.key = view.key;
      const svg = await chartOf(machine);
      if (chart.dataset.key !== view.key) return;
      if (svg) chart.innerHTML = svg;
      else chart.replaceChildren(fallbackChart(list));
    } else if (!chart.querySelector('svg') && !chart.querySelector(`[data-state="${CSS.escape(current)}"]`)) {
      chart.replaceChildren(fallbackChart(list));
    }
    for (const el of chart.querySelectorAll('.is-current, .is-active')) el.classList.remove('is-current', 'is-active');
    const parts = current.split('.');
    for (let i = 1; i < parts.length; i++) chart.querySelector(`[data-state="${CSS.escape(parts.slice(0, i).join('.'))}"]`)?.classList.add('is-active');
    chart.querySelector(`[data-state="${CSS.escape(current)}"]`)?.classList.add('is-current');
    chart.dataset.current = current;
  }

  /** Without a statechart renderer: the states this instance visited, in order of first visit. */
  function fallbackChart(list) {
    const seen = [];
    for (const r of list) for (const s of [r.from, r.to]) if (s && !seen.includes(s)) seen.push(s);
    return h('div', { class: 'fallback' }, seen.map((s) => h('div', { 'data-state': s }, s)));
  }

  function render() {
    const list = records();
    const n = list.length;
    if (view.following || view.index >= n) view.index = Math.max(0, n - 1);
    const r = list[view.index];
    $('step-scrubber').max = String(Math.max(0, n - 1));
    $('step-scrubber').value = String(view.index);
    $('step-position').textContent = n ? `${view.index + 1} / ${n}` : '0 / 0';
    for (const [id, off] of [['step-first', view.index <= 0], ['step-back', view.index <= 0], ['step-forward', view.index >= n - 1], ['step-last', view.index >= n - 1], ['step-play', n < 2]]) $(id).disabled = off;
    $('step-play').innerHTML = view.playing ? `${PAUSE_ICON} Pause` : `${PLAY_ICON} Play`;
    $('step-play').dataset.playing = view.playing ? 'true' : 'false';
    if (!r) {
      $('current-state').textContent = '';
      $('current-state').dataset.currentState = '';
      const folded = all().length - n;
      // say why there is nothing to step through rather than show an empty view
      const why = !view.key
        ? []
        : folded > 0
          ? [h('li', { class: 'empty' }, `${folded} heartbeat transition(s), folded away: tick "Show heartbeats" to step through them.`)]
          : [h('li', { class: 'empty' }, `No transitions of this machine since ${followingSince()}: it has not changed state since then. Its next transition appears here.`)];
      $('timeline').replaceChildren(...why);
      return;
    }
    $('step-machine').textContent = `${r.machine} · ${r.id}${view.source === 'trace' ? ' · trace file' : ' · live'}`;
    $('step-title').textContent = label(r.machine, r.id, list);
    $('current-state').textContent = r.to;
    $('current-state').dataset.currentState = r.to;
    $('step-event').textContent = JSON.stringify(r.event, null, 2);
    $('step-context').textContent = JSON.stringify(r.context, null, 2);
    // a window of the timeline around the position: heartbeat machines make thousands of records
    const lo = Math.max(0, view.index - TIMELINE_WINDOW);
    const hi = Math.min(n, view.index + TIMELINE_WINDOW + 1);
    $('timeline').replaceChildren(...list.slice(lo, hi).map((x, j) => [x, lo + j]).map(([x, i]) => h('li', { class: i === view.index ? 'current' : '', 'data-index': i, 'data-to': x.to, onclick: () => go(i) },
      h('span', { class: 'seq' }, `#${x.seq}`),
      h('span', { class: 't' }, clockMs(x.time)),
      h('span', { class: 'ev', title: x.event.type }, x.eventName ?? x.event.type),
      h('span', { class: 'arrow' }, x.from ?? '∅', ' → ', h('b', {}, x.to)))));
    $('timeline').querySelector('li.current')?.scrollIntoView({ block: 'nearest' });
    void renderChart(list, r.to);
  }

  function go(i) {
    const n = records().length;
    view.index = Math.max(0, Math.min(n - 1, i));
    view.following = view.source === 'live' && view.index === n - 1;
    render();
  }

  function stopPlaying() {
    clearInterval(view.playing);
    view.playing = undefined;
  }

  function togglePlay() {
    if (view.playing) {
      stopPlaying();
      render();
      return;
    }
    if (view.index >= records().length - 1) view.index = 0;
    view.following = false;
    view.playing = setInterval(() => {
      if (view.index >= records().length - 1) {
        stopPlaying();
        render();
        return;
      }
      go(view.index + 1);
    }, PLAY_MS);
    render();
  }

  function select(key, { updateHash = true } = {}) {
    stopPlaying();
    view.key = key;
    view.following = true;
    if (updateHash) history.replaceState(null, '', `#step/${view.source}/${key}`);
    renderInstances();
    render();
  }

  function setSource(source) {
    if (!view.available[source]) return;
    stopPlaying();
    view.source = source;
    view.key = undefined;
    for (const b of document.querySelectorAll('#source-switch .seg')) b.classList.toggle('active', b.dataset.source === source);
    $('source-note').textContent = source === 'trace' ? traceNote : `Transitions of the running cluster since ${followingSince()}.`;
    $('chart').replaceChildren(h('p', { class: 'empty' }, 'Pick a machine on the left to see its statechart.'));
    delete $('chart').dataset.key;
    $('step-title').textContent = 'Choose a machine instance';
    $('step-machine').textContent = 'No machine selected';
    $('step-event').textContent = '–';
    $('step-context').textContent = '–';
    renderInstances();
    render();
  }

  let traceNote = '';
  let liveTimer;
  let touched = false;
  /** /api/info's history: since when the dashboard has kept transitions, or null. */
  let kept = null;
  const followingSince = () =>
    kept?.retained && kept.since
      ? `${clock(kept.since)}, when the dashboard began following them`
      : 'this page began following them (the dashboard runs with --no-history)';

  async function start(info) {
    view.available.live = info.inspection;
    kept = info.history ?? null;
    view.available.trace = info.trace !== null;
    for (const b of document.querySelectorAll('#source-switch .seg')) b.disabled = !view.available[b.dataset.source];
    $('step-first').onclick = () => go(0);
    $('step-back').onclick = () => go(view.index - 1);
    $('step-forward').onclick = () => go(view.index + 1);
    $('step-last').onclick = () => go(records().length - 1);
    $('step-play').onclick = togglePlay;
    $('step-scrubber').oninput = (e) => go(Number(e.target.value));
    $('instance-filter').oninput = renderInstances;
    $('show-heartbeats').onchange = (e) => {
      view.showHeartbeats = e.target.checked;
      view.following = true;
      render();
    };
    for (const b of document.querySelectorAll('#source-switch .seg')) b.onclick = () => setSource(b.dataset.source);
    document.addEventListener('keydown', (e) => {
      if (document.querySelector('[data-view="step"]').hidden || e.target.matches('input, textarea')) return;
      if (e.key === 'ArrowLeft') go(view.index - 1);
      else if (e.key === 'ArrowRight') go(view.index + 1);
      else if (e.key === ' ') {
        e.preventDefault();
        togglePlay();
      } else return;
    });
    if (info.trace) {
      try {
        const trace = await api.trace();
        for (const r of trace.records) add('trace', r);
        traceNote = `${trace.path}: cluster "${trace.header.cluster}", recorded ${new Date(trace.header.startedAt).toLocaleString()}, ${trace.records.length} records.`;
      } catch (err) {
        toast(`trace: ${err.message}`, true);
      }
    }
    if (info.inspection) {
      const source = follow('/api/inspect/stream', 'inspect', (r) => {
        if (!add('live', r)) return;
        if (view.source !== 'live') return;
        // records come in bursts (a page that opens gets the kept ones at once): render once per
        // burst, and the open machine's view if any record of the burst was its
        if (view.key === keyOf(r)) touched = true;
        clearTimeout(liveTimer);
        liveTimer = setTimeout(() => {
          renderInstances();
          if (touched || !view.key) render();
          touched = false;
        }, 50);
      });
      // which processes send their machines' transitions to this page (gcs:…, raylet:…): shown on
      // the step view's root element, from when each attached
      const attached = new Set();
      source.addEventListener('attached', (e) => {
        attached.add(JSON.parse(e.data).publisher);
        $('instance-list').dataset.attached = [...attached].sort().join(' ');
      });
    }
    setSource(info.trace && !info.cluster ? 'trace' : info.inspection ? 'live' : info.trace ? 'trace' : 'live');
  }

  /** `#step/<source>/<machine>/<id>`: opens that instance. */
  function route(parts) {
    const [source, machine, id] = parts;
    if (source && source !== view.source && view.available[source]) setSource(source);
    if (machine && id) select(`${machine}/${id}`, { updateHash: false });
  }

  return { start, route, refreshLabels: renderInstances };
}
