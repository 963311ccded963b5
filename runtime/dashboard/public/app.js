// The dashboard page: two views (cluster, step-through) chosen by the URL's hash.
import { api } from './api.js';
import { clusterView } from './cluster-view.js';
import { stepView } from './step-view.js';
import { explainForm } from './explain.js';

const $ = (id) => document.getElementById(id);
let toastTimer;

function toast(message, error = false) {
  const el = $('toast');
  el.textContent = message;
  el.classList.toggle('error', error);
  el.hidden = false;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (el.hidden = true), error ? 6000 : 2500);
}

function connection(state, detail) {
  $('conn').dataset.state = state;
  $('conn-text').textContent = { live: 'live', offline: 'reconnecting…', trace: 'trace file', connecting: 'connecting…' }[state] ?? state;
  $('conn').title = detail ?? '';
}

// set from /api/info before the cluster view first renders: a read-only dashboard shows no write controls
const access = { readOnly: false };
const cluster = clusterView({ toast, onConnection: connection, openActor: (id) => (location.hash = `#step/live/actor/${id}`), readOnly: () => access.readOnly });
const step = stepView({
  toast,
  describeActor: (id) => {
    const a = cluster.actors().find((x) => x.actorId === id);
    return a ? a.name ?? `${a.className} ${id.slice(0, 8)}` : undefined;
  },
  describeNode: (id) => {
    const name = cluster.nodeName(id);
    return name === id.slice(0, 8) ? undefined : name;
  },
});

function show() {
  const [tab, ...rest] = location.hash.replace(/^#/, '').split('/');
  const current = tab === 'step' ? 'step' : 'cluster';
  for (const v of document.querySelectorAll('.view')) v.hidden = v.dataset.view !== current;
  for (const t of document.querySelectorAll('.tab')) t.classList.toggle('active', t.dataset.tab === current);
  if (current === 'step') step.route(rest);
}

async function main() {
  const info = await api.info();
  access.readOnly = info.readOnly === true;
  document.body.dataset.readOnly = String(access.readOnly);
  $('read-only').hidden = !access.readOnly;
  $('cluster-name').textContent = info.cluster ?? (info.trace ? `trace · ${info.trace.cluster}` : '');
  document.title = `orrery · ${info.cluster ?? 'trace'}`;
  if (!info.cluster) {
    connection('trace');
    document.querySelector('[data-tab="cluster"]').hidden = true;
    if (!location.hash.startsWith('#step')) location.hash = '#step';
  }
  await step.start(info);
  window.addEventListener('hashchange', show);
  show();
  if (info.cluster) {
    explainForm({ toast, nodeName: (id) => cluster.nodeName(id) });
    await cluster.start();
  }
  document.body.dataset.ready = 'true';
}

main().catch((err) => {
  connection('offline', err.message);
  toast(`dashboard: ${err.message}`, true);
});
