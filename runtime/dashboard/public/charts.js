// Charts over time: the last few minutes of the cluster, drawn as SVG of our own (no library, no
// network). Once a second the cluster view hands over a sample of what it holds — kept current by
// the event stream — and the events seen since the last sample give the rates. Each chart is a
// <figure data-chart=…> with one <polyline data-series=…> per line; a polyline's data-last is the
// value of its newest point, so a reader (or a spec) can check a chart without reading pixels.
import { h } from './format.js';

/** Samples kept: one a second, five minutes. */
export const WINDOW = 300;
export const SAMPLE_MS = 1000;

const SVG = 'http://www.w3.org/2000/svg';
const W = 300;
const H = 80;

/** What each chart draws: its title, and its lines as [series key, legend, CSS class]. */
const CHARTS = [
  { id: 'pending', title: 'Pending actors', lines: [['pending', 'pending', 's-warn']] },
  { id: 'actors', title: 'Actors by state', lines: [['ALIVE', 'alive', 's-ok'], ['PENDING', 'pending', 's-warn'], ['RESTARTING', 'restarting', 's-accent'], ['DEAD', 'dead', 's-bad']] },
  { id: 'cpu', title: 'CPU used / total', lines: [['cpuUsed', 'used', 's-accent'], ['cpuTotal', 'total', 's-muted']] },
  { id: 'gpu', title: 'GPU used / total', lines: [['gpuUsed', 'used', 's-accent'], ['gpuTotal', 'total', 's-muted']] },
  { id: 'creations', title: 'Creations per second', lines: [['creations', 'actors started', 's-ok']] },
  { id: 'failures', title: 'Schedule failures per second', lines: [['failures', 'schedule_failed', 's-bad']] },
];

/**
 * `container` gets the charts. `snapshot()` returns the view's current nodes and actors. Call
 * `record(event)` for every new event and `start()` once the view has its first state.
 */
export function timeCharts(container, snapshot) {
  const samples = [];
  let creations = 0;
  let failures = 0;
  let last = performance.now();
  let timer;

  const figures = new Map(CHARTS.map((c) => [c.id, figure(c)]));
  container.replaceChildren(...figures.values());

  function record(e) {
    // an actor's first start (a restart also reaches ALIVE, with numRestarts > 0)
    if (e.type === 'actor_state' && e.actor?.state === 'ALIVE' && !e.actor.numRestarts) creations++;
    else if (e.type === 'schedule_failed') failures++;
  }

  function sample() {
    const now = performance.now();
    const secs = Math.max(0.001, (now - last) / 1000);
    last = now;
    const { nodes, actors } = snapshot();
    const s = { at: Date.now(), pending: 0, ALIVE: 0, PENDING: 0, RESTARTING: 0, DEAD: 0, cpuUsed: 0, cpuTotal: 0, gpuUsed: 0, gpuTotal: 0 };
    for (const a of actors) if (a.state in s) s[a.state]++;
    s.pending = s.PENDING;
    for (const n of nodes) {
      if (n.state === 'DEAD') continue;
      for (const [name, used, total] of [['CPU', 'cpuUsed', 'cpuTotal'], ['GPU', 'gpuUsed', 'gpuTotal']]) {
        const t = n.resources.total[name] ?? 0;
        s[total] += t;
        s[used] += Math.max(0, t - (n.resources.available[name] ?? 0));
      }
    }
    s.creations = creations / secs;
    s.failures = failures / secs;
    creations = 0;
    failures = 0;
    samples.push(s);
    if (samples.length > WINDOW) samples.shift();
    draw();
  }

  function draw() {
    for (const chart of CHARTS) {
      const fig = figures.get(chart.id);
      const max = niceMax(Math.max(0, ...chart.lines.flatMap(([key]) => samples.map((s) => s[key]))));
      fig.querySelector('.y-max').textContent = format(max);
      const span = samples.length > 1 ? `${Math.round((samples.at(-1).at - samples[0].at) / 1000)} s` : '';
      fig.querySelector('.x-span').textContent = span && `last ${span}`;
      for (const [key] of chart.lines) {
        const line = fig.querySelector(`polyline[data-series="${key}"]`);
        // newest point at the right edge; the window fills from the right as samples arrive
        const offset = WINDOW - samples.length;
        const points = samples.map((s, i) => `${(((offset + i) / (WINDOW - 1)) * W).toFixed(1)},${(H - (s[key] / max) * H).toFixed(1)}`);
        line.setAttribute('points', points.join(' '));
        const value = samples.at(-1)?.[key] ?? 0;
        line.dataset.last = String(Math.round(value * 100) / 100);
        fig.querySelector(`.legend [data-series="${key}"] .now`).textContent = format(value);
      }
    }
  }

  function start() {
    sample();
    timer ??= setInterval(sample, SAMPLE_MS);
  }

  return { record, start, stop: () => clearInterval(timer) };
}

function figure(chart) {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  svg.setAttribute('preserveAspectRatio', 'none');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', chart.title);
  for (const y of [0, H / 2, H]) {
    const grid = document.createElementNS(SVG, 'line');
    Object.entries({ x1: 0, x2: W, y1: y, y2: y, class: 'grid' }).forEach(([k, v]) => grid.setAttribute(k, String(v)));
    svg.append(grid);
  }
  for (const [key, , cls] of chart.lines) {
    const line = document.createElementNS(SVG, 'polyline');
    line.setAttribute('data-series', key);
    line.setAttribute('class', cls);
    line.setAttribute('vector-effect', 'non-scaling-stroke');
    svg.append(line);
  }
  return h('figure', { class: 'tchart', 'data-chart': chart.id },
    h('figcaption', {}, h('span', { class: 'title' }, chart.title), h('span', { class: 'y-max', title: 'top of the scale' })),
    h('div', { class: 'plot' }, svg),
    h('div', { class: 'tchart-foot' },
      h('span', { class: 'legend' }, chart.lines.map(([key, legend, cls]) => h('span', { 'data-series': key, class: cls }, h('i', {}), `${legend} `, h('b', { class: 'now' }, '0')))),
      h('span', { class: 'x-span' })));
}

/** The top of a chart's scale: 1, 2 or 5 times a power of ten, at least 1. */
function niceMax(value) {
  if (value <= 1) return 1;
  const p = 10 ** Math.floor(Math.log10(value));
  for (const m of [1, 2, 5, 10]) if (value <= m * p) return m * p;
  return 10 * p;
}

function format(v) {
  return Number.isInteger(v) ? String(v) : v >= 10 ? String(Math.round(v)) : v.toFixed(1);
}
