// The page's calls to the dashboard's REST API (docs/dashboard.md). Failures throw an Error whose
// message is the server's `message` and whose `code` is its stable code.

async function request(method, path, body) {
  const res = await fetch(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  // a dashboard started with a token, and this browser no longer signed in: sign in again
  if (res.status === 401) location.assign('/login');
  const text = await res.text();
  const value = text ? JSON.parse(text) : undefined;
  if (!res.ok) {
    const err = new Error(value?.message ?? `${method} ${path}: HTTP ${res.status}`);
    err.code = value?.code ?? `HTTP_${res.status}`;
    err.status = res.status;
    throw err;
  }
  return value;
}

const node = (id) => `/api/nodes/${encodeURIComponent(id)}`;

export const api = {
  info: () => request('GET', '/api/info'),
  nodes: () => request('GET', '/api/nodes'),
  actors: () => request('GET', '/api/actors'),
  placementGroups: () => request('GET', '/api/placement-groups'),
  gcs: () => request('GET', '/api/gcs'),
  events: (limit = 200) => request('GET', `/api/events?limit=${limit}`),
  trace: () => request('GET', '/api/trace'),
  explain: (body) => request('POST', '/api/explain', body),
  addTaints: (id, taints) => request('POST', `${node(id)}/taints`, taints),
  removeTaint: (id, key) => request('DELETE', `${node(id)}/taints/${encodeURIComponent(key)}`),
  addLabels: (id, labels) => request('POST', `${node(id)}/labels`, labels),
  removeLabel: (id, key) => request('DELETE', `${node(id)}/labels/${encodeURIComponent(key)}`),
  async statechart(machine) {
    const res = await fetch(`/api/machines/${encodeURIComponent(machine)}/statechart.svg`);
    return res.ok ? res.text() : undefined;
  },
};

/** Follows a Server-Sent Events route; `onState` hears 'live' / 'offline' as the browser reconnects. */
export function follow(path, eventName, onData, onState) {
  const source = new EventSource(path);
  source.addEventListener(eventName, (e) => onData(JSON.parse(e.data)));
  source.addEventListener('open', () => onState?.('live'));
  source.addEventListener('error', () => onState?.(source.readyState === EventSource.CLOSED ? 'closed' : 'offline'));
  return source;
}
