// The dashboard page in a real browser (Debian's chromium, headless, driven by playwright-core)
// against a GCS and raylet processes on a real nats-server: the cluster view lists nodes and actors;
// stepping an actor's machine back and forward moves the highlighted state; a taint added on a node
// card changes the card and where the next actor lands; a recorded failover trace, loaded with
// `orrery dashboard --trace FILE`, steps through ALIVE → RESTARTING → PENDING → SCHEDULED → ALIVE.
// And what no other web page can do: a page served from another origin that fires a no-cors fetch,
// CORS fetches and a form post at the taint route changes nothing; a page whose name resolves to this
// machine (DNS rebinding) is refused; a dashboard with a token is used through its sign-in form; a
// read-only one shows no write controls.
// Screenshots go to artifacts/screenshots/ for a reviewer. Without chromium the suite fails with
// the command that installs it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom, timeout } from 'rxjs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { nodeIdAffinity } from '../../lib/index.ts';
import { ClusterClient } from '../../runtime/client/cluster.ts';
import { startDashboard, type Dashboard } from '../../runtime/dashboard/server.ts';
import { recordTrace } from '../../runtime/inspect/recorder.ts';
import { startLocalCluster, type ActorHandle, type ActorInfo, type LocalCluster } from '../../runtime/index.ts';
import { JournalActor, type Journal } from '../runtime/client/failover-actors.ts';
import { RunningCli } from '../runtime/cli/process.ts';
import { CHROMIUM, chromiumMissing, launchChromium, screenshot } from '../dashboard/browser.ts';

const WAIT_MS = 20_000;
// a dead raylet is noticed within 1.5 s (runtime/gcs/flags.ts reads these in the GCS process)
process.env.ORRERY_HEARTBEAT_MS = '200';
process.env.ORRERY_NODE_TIMEOUT_MS = '1500';

const missing = chromiumMissing();
let local: LocalCluster;
let dash: Dashboard;
let browser: Browser;
let ids: Record<string, string>;
const dir = mkdtempSync(join(tmpdir(), 'orrery-dashboard-browser-'));

test.before(async () => {
  if (missing) return;
  local = await startLocalCluster({
    transport: 'nats',
    nodes: [
      { name: 'alpha', resources: { CPU: 4 }, labels: { zone: 'east' } },
      { name: 'beta', resources: { CPU: 4, GPU: 1 }, labels: { zone: 'west' } },
      { name: 'gamma', resources: { CPU: 2 } },
    ],
  });
  ids = Object.fromEntries((await local.cluster.nodes()).map((n) => [n.name, n.nodeId]));
  dash = await startDashboard({ cluster: local.cluster, port: 0 });
  browser = await launchChromium();
});
test.after(async () => {
  await browser?.close();
  await dash?.close();
  await local?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function open(url: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1440, height: 960 } });
  page.setDefaultTimeout(WAIT_MS);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
  assert.equal(errors, [], 'no script errors');
  return page;
}

const nameOf = (nodeId: string | undefined): string | undefined => Object.entries(ids).find(([, id]) => id === nodeId)?.[0];
const stateOf = (h: ActorHandle<unknown>, pass: (i: ActorInfo) => boolean): Promise<ActorInfo> => firstValueFrom(h.state$.pipe(filter(pass), timeout(WAIT_MS)));
const card = (name: string): string => `.node-card[data-node-name="${name}"]`;
const current = (page: Page): Promise<string | null> => page.getAttribute('#current-state', 'data-current-state');
/** The state box the statechart highlights (runtime/inspect draws states with data-state). */
const highlighted = (page: Page): Promise<string | null> => page.getAttribute('#chart [data-state].is-current', 'data-state');

/**
 * The statuses of the POSTs to `url` that `page` sends, as they arrive, read from the DevTools
 * protocol's network events (they carry the answer's status even when the browser then fails the
 * request for CORS or CORP).
 */
async function postAnswers(page: Page, url: string): Promise<number[]> {
  const cdp = await page.context().newCDPSession(page);
  const posts = new Set<string>();
  const early = new Map<string, number>();
  const statuses: number[] = [];
  cdp.on('Network.requestWillBeSent', (e) => {
    if (e.request.url !== url || e.request.method !== 'POST') return;
    posts.add(e.requestId);
    if (early.has(e.requestId)) statuses.push(early.get(e.requestId)!);
  });
  // the extra-info event can come before requestWillBeSent
  cdp.on('Network.responseReceivedExtraInfo', (e) => {
    if (posts.has(e.requestId)) statuses.push(e.statusCode);
    else early.set(e.requestId, e.statusCode);
  });
  await cdp.send('Network.enable');
  return statuses;
}

/** Waits until `pass()` holds, checking every 50 ms, for at most WAIT_MS. */
async function until(pass: () => boolean): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!pass()) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits until the asynchronous `pass()` holds, checking every 100 ms, for at most WAIT_MS. */
async function untilAsync(pass: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await pass())) {
    if (Date.now() > deadline) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A tiny web server on another port, serving one HTML page at every path. */
async function serveHtml(html: string): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/**
 * A hostile page: it tries to set a NoExecute taint with every request a page may make to another
 * origin — a no-cors fetch (text/plain, with and without cookies), a simple CORS fetch (text/plain),
 * a CORS fetch of JSON (preflighted) — records how each settled in `window.results`, then marks the
 * body done. Its form (text/plain, with a body that is valid JSON) is posted by the spec.
 */
function attackPage(target: string): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>not the dashboard</title></head>
<body>
<iframe name="sink" title="sink"></iframe>
<form id="post-form" method="post" enctype="text/plain" action="${target}" target="sink">
  <input type="hidden" name='{"evicted":"form:NoExecute","x":"' value='"}'>
  <button type="submit">post</button>
</form>
<script>
  const target = ${JSON.stringify(target)};
  const body = JSON.stringify({ evicted: 'yes:NoExecute' });
  const results = {};
  const attempt = async (name, send) => {
    try {
      const r = await send();
      results[name] = r.type === 'opaque' ? 'opaque' : r.status;
    } catch {
      results[name] = 'blocked';
    }
  };
  (async () => {
    await attempt('noCors', () => fetch(target, { method: 'POST', mode: 'no-cors', body }));
    await attempt('noCorsWithCookies', () => fetch(target, { method: 'POST', mode: 'no-cors', credentials: 'include', body }));
    await attempt('corsText', () => fetch(target, { method: 'POST', body }));
    await attempt('corsJson', () => fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body }));
    window.results = results;
    document.body.dataset.done = 'true';
  })();
</script>
</body></html>`;
}

if (missing) {
  test('chromium is installed (the dashboard browser specs need it)', () => {
    assert.unreachable(missing);
  });
} else {
  test('the cluster view lists every node as a card (labels, taints, resources, actors) and every actor in the table', async () => {
    const handle = await local.cluster.actor(JournalActor).options({ name: 'ledger', schedulingStrategy: nodeIdAffinity(ids.beta) }).remote();
    await handle.ready({ timeoutMs: WAIT_MS });
    const waiting = await local.cluster.actor(JournalActor).options({ labelSelector: { zone: 'north' } }).remote();
    const page = await open(dash.url);
    for (const name of ['alpha', 'beta', 'gamma']) {
      await page.waitForSelector(`${card(name)}[data-state="ALIVE"]`);
      assert.is(await page.getAttribute(card(name), 'data-node-id'), ids[name]);
    }
    assert.is(await page.textContent(`${card('alpha')} [data-label="zone"]`), 'zone=east×');
    // the summary opens with what the GCS is doing (from /api/gcs, asked beside the lists)
    await page.waitForSelector('#summary .stat:first-child:has-text("GCS")');
    assert.match((await page.textContent('#summary .stat:first-child'))!, /^GCS\s*serving$/);
    assert.match((await page.textContent(`${card('beta')} [data-resource="GPU"]`))!, /GPU\s*0\/1/);
    await page.waitForSelector(`${card('beta')} .actor-pill[data-actor-id="${handle.actorId}"]`);
    const row = `#actors tr[data-actor-id="${handle.actorId}"]`;
    await page.waitForSelector(`${row}[data-state="ALIVE"]`);
    assert.match((await page.textContent(row))!, /ledger.*Journal.*ALIVE.*beta/);
    await page.waitForSelector(`#actors tr[data-actor-id="${waiting.actorId}"][data-state="PENDING"] td.reason`);
    await page.waitForSelector('#feed li.schedule_failed');
    assert.match((await page.textContent('#feed li.schedule_failed'))!, /cannot be placed: 0\/3 nodes are available: 3 node\(s\) didn't match label selector zone in \(north\)/);
    await screenshot(page, 'cluster-view');
    await page.close();
    await waiting.kill();
    await handle.kill();
  });

  test('stepping an actor\'s machine back and forward moves the highlighted state of its statechart', async () => {
    const page = await open(`${dash.url}#step`);
    // once the GCS's publisher has attached (the stream's `attached` event), its machines' transitions reach this page
    await page.waitForSelector('#instance-list[data-attached*="gcs:"]');
    const handle = await local.cluster.actor(JournalActor).options({ name: 'stepper' }).remote();
    await handle.ready({ timeoutMs: WAIT_MS });
    const item = `#instance-list .instance[data-machine="actor"][data-id="${handle.actorId}"]`;
    // selectors, not waitForFunction: the page's Content-Security-Policy allows no eval, which that uses
    await page.locator(`${item} .istate`, { hasText: /^onNode\.ALIVE$/ }).waitFor();
    await page.click(item);
    await page.waitForSelector('#chart [data-state="onNode.ALIVE"].is-current');
    assert.is(await current(page), 'onNode.ALIVE');
    assert.is(await page.textContent('#step-position'), '3 / 3');
    assert.is(await page.textContent('#step-title'), 'stepper');

    await page.click('#step-back');
    assert.is(await highlighted(page), 'onNode.SCHEDULED');
    assert.is(await current(page), 'onNode.SCHEDULED');
    assert.is(await page.getAttribute('#timeline li.current', 'data-to'), 'onNode.SCHEDULED');
    await page.click('#step-back');
    assert.is(await highlighted(page), 'PENDING');
    assert.ok(await page.isDisabled('#step-back'), 'the first transition: nothing before it');
    assert.match((await page.textContent('#step-context'))!, /"className": "Journal"/);
    await screenshot(page, 'step-through-live');
    await page.click('#step-forward');
    assert.is(await highlighted(page), 'onNode.SCHEDULED');
    await page.fill('#step-scrubber', '2');
    assert.is(await highlighted(page), 'onNode.ALIVE');
    assert.is(await page.textContent('#step-position'), '3 / 3');
    await page.close();
    await handle.kill();
  });

  test('the step-through of an actor created while no page was open shows its transitions from PENDING on (the dashboard keeps history)', async () => {
    // the dashboard follows the cluster's transitions from its start: wait until the GCS has attached
    await untilAsync(async () => {
      const info = (await (await fetch(`${dash.url}api/info`)).json()) as { history: { retained: boolean; since: number; attached: string[] } };
      return info.history.retained && info.history.attached.some((p) => p.startsWith('gcs:'));
    });
    const handle = await local.cluster.actor(JournalActor).options({ name: 'before-the-page' }).remote();
    await handle.ready({ timeoutMs: WAIT_MS });
    const page = await open(`${dash.url}#step/live/actor/${handle.actorId}`);
    await page.waitForSelector('#chart [data-state="onNode.ALIVE"].is-current');
    assert.is(await page.textContent('#step-position'), '3 / 3');
    assert.equal(await page.$$eval('#timeline li', (lis) => lis.map((li) => li.getAttribute('data-to'))), ['PENDING', 'onNode.SCHEDULED', 'onNode.ALIVE']);
    assert.is(await page.textContent('#step-title'), 'before-the-page');
    assert.match((await page.textContent('#source-note'))!, /since \d\d:\d\d:\d\d, when the dashboard began following them/);
    await page.close();
    await handle.kill();
  });

  test('a long pending reason is shown whole in the actors table, at 1440 px and at 375 px wide; at 375 px nothing runs off the page', async () => {
    const selector = { zone: 'in(nowhere-at-all-region-1,nowhere-at-all-region-2,nowhere-at-all-region-3,nowhere-at-all-region-4)' };
    const waiting = await local.cluster.actor(JournalActor).options({ name: 'long-reason', labelSelector: selector }).remote();
    let reason = '';
    const pendingReason = async (): Promise<void> => {
      reason = (await waiting.info()).pendingReason ?? '';
      if (reason === '') {
        await firstValueFrom(waiting.state$.pipe(filter((i) => i.pendingReason !== undefined), timeout(WAIT_MS)));
        reason = (await waiting.info()).pendingReason ?? '';
      }
    };
    await pendingReason();
    assert.ok(reason.length > 100, `a long reason: ${reason}`);
    for (const width of [1440, 375]) {
      const page = await browser.newPage({ viewport: { width, height: 900 } });
      page.setDefaultTimeout(WAIT_MS);
      await page.goto(dash.url);
      const cell = `#actors tr[data-actor-id="${waiting.actorId}"] td.reason`;
      await page.waitForSelector(cell);
      // the table is rendered again as the cluster changes: read a cell that is still in the page
      const read = () => page.$eval(cell, (el) => {
        // white-space is a shorthand in newer Chromium: its wrapping half is text-wrap-mode
        const style = (globalThis as unknown as { getComputedStyle(e: unknown): { whiteSpace: string; textWrapMode?: string } }).getComputedStyle(el);
        const wraps = style.whiteSpace === 'normal' || style.textWrapMode === 'wrap';
        const box = el.getBoundingClientRect();
        const screen = (globalThis as unknown as { innerWidth: number }).innerWidth;
        return { connected: el.isConnected, text: el.textContent ?? '', wraps, style: `${style.whiteSpace}/${String(style.textWrapMode)}`, clipped: el.scrollWidth > el.clientWidth + 1, onScreen: box.left >= 0 && box.right <= screen + 1 };
      });
      let shown = await read();
      for (let tries = 0; !shown.connected && tries < 50; tries++) shown = await read();
      assert.ok(shown.text.includes(reason), `${width} px: the whole reason is in the cell`);
      assert.ok(shown.wraps, `${width} px: the reason wraps (${shown.style})`);
      assert.not.ok(shown.clipped, `${width} px: nothing of it is cut off`);
      assert.ok(shown.onScreen, `${width} px: the cell lies within the screen's width, no scrolling sideways`);
      if (width === 375) {
        // the page itself does not scroll sideways: cards and tables fit, or scroll inside their card
        const overflow = await page.$eval('body', (b) => b.scrollWidth - b.clientWidth);
        assert.ok(overflow <= 1, `the page is ${overflow} px wider than the screen`);
      }
      await screenshot(page, `pending-reason-${width}`);
      await page.close();
    }
    await waiting.kill();
  });

  test('the actors table filters by state, node and namespace and pages through 2,000 actors', async () => {
    const many = 2_000;
    // pending for want of a zone no node has: cheap to hold (no worker host), all in the table
    const created = await Promise.all(Array.from({ length: many }, () => local.cluster.actor(JournalActor).options({ labelSelector: { zone: 'mars' } }).remote()));
    const elsewhere = await Promise.all(Array.from({ length: 3 }, () => local.cluster.actor(JournalActor).options({ namespace: 'other', labelSelector: { zone: 'mars' } }).remote()));
    const placed = await local.cluster.actor(JournalActor).options({ schedulingStrategy: nodeIdAffinity(ids.gamma) }).remote();
    await placed.ready({ timeoutMs: WAIT_MS });
    try {
      const page = await open(dash.url);
      const rows = () => page.$$eval('#actors tbody tr[data-actor-id]', (trs) => trs.map((tr) => tr.getAttribute('data-state') ?? ''));
      await page.waitForSelector('#actor-page:text-matches("^1–50 of [0-9,]+$")');
      assert.is((await rows()).length, 50, 'one page of 50 rows');
      const total = Number((await page.textContent('#actor-page'))!.split(' of ')[1]);
      assert.ok(total >= many + 4, `${total} actors listed (not DEAD)`);
      await page.click('#actor-next');
      await page.waitForSelector('#actor-page:text("51–100 of")');
      assert.is((await rows()).length, 50);
      await page.selectOption('#actor-state', 'ALIVE');
      await page.waitForSelector(`#actors tbody tr[data-actor-id="${placed.actorId}"]`);
      assert.ok((await rows()).every((state) => state === 'ALIVE'), 'only ALIVE actors');
      assert.match((await page.textContent('#actor-page'))!, /^1–\d+ of \d+$/, 'a filter starts again at the first page');
      await page.selectOption('#actor-node', ids.gamma);
      const onGamma = await page.$$eval('#actors tbody tr[data-actor-id]', (trs) => trs.map((tr) => tr.getAttribute('data-actor-id')));
      assert.ok(onGamma.includes(placed.actorId));
      await page.selectOption('#actor-node', '');
      await page.selectOption('#actor-state', '');
      await page.fill('#actor-namespace', 'other');
      await page.waitForSelector('#actor-page:text("1–3 of 3")');
      assert.equal(new Set(await page.$$eval('#actors tbody tr[data-actor-id]', (trs) => trs.map((tr) => tr.getAttribute('data-actor-id')))), new Set(elsewhere.map((h) => h.actorId)));
      await screenshot(page, 'actors-filtered');
      await page.close();
    } finally {
      await Promise.all([...created, ...elsewhere, placed].map((h) => h.kill().catch(() => undefined)));
    }
  });

  test('a raylet\'s heartbeats are folded away in the step-through (a toggle shows them), and events read as in the CLI', async () => {
    const page = await open(`${dash.url}#step`);
    const raylet = '#instance-list .instance[data-machine="raylet"]';
    // wait until a raylet has beaten a few times while this page follows
    const beats = async (): Promise<string[]> => page.$$eval(raylet, (els) => els.map((e) => e.textContent ?? ''));
    const deadline = Date.now() + WAIT_MS;
    while (!(await beats()).some((t) => /· ([3-9]|\d{2,}) transitions/.test(t))) {
      if (Date.now() > deadline) throw new Error(`no raylet with a few transitions: ${(await beats()).join(' | ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await page.click(raylet);
    await page.waitForSelector('#timeline li');
    const folded = await page.$$eval('#timeline li', (lis) => lis.map((li) => li.textContent ?? ''));
    assert.not.ok(folded.some((t) => /after\(heartbeat\)|running\.beating/.test(t)), `no heartbeats by default: ${folded.slice(0, 3).join(' | ')}`);
    await page.check('#show-heartbeats');
    await page.waitForSelector('#timeline li .ev:text("after(heartbeat)")');
    const names = await page.$$eval('#timeline li .ev', (els) => els.map((e) => e.textContent ?? ''));
    assert.ok(names.includes('done(running.beating)'), names.slice(0, 5).join(', '));
    assert.not.ok(names.some((n) => n.startsWith('xstate.')), 'readable names, as orrery trace replay prints them');
    await page.close();
  });

  test('the charts over time draw every series, and move when actors are created: counts and CPU as the cluster reports them', async () => {
    const page = await open(dash.url);
    const expected = { pending: ['pending'], actors: ['ALIVE', 'PENDING', 'RESTARTING', 'DEAD'], cpu: ['cpuUsed', 'cpuTotal'], gpu: ['gpuUsed', 'gpuTotal'], creations: ['creations'], failures: ['failures'] };
    // the structure, not the pixels: six figures, each an svg with one polyline per series
    const structure = await page.$$eval('#charts figure.tchart', (figs) =>
      Object.fromEntries(figs.map((f) => [f.getAttribute('data-chart'), [...f.querySelectorAll('svg polyline')].map((l) => l.getAttribute('data-series'))])));
    assert.equal(structure, expected);
    /** The newest value of a series, and how many points its line has. */
    const series = (chart: string, key: string): Promise<{ last: number; points: number[] }> =>
      page.$eval(`#charts figure[data-chart="${chart}"] polyline[data-series="${key}"]`, (l) => ({
        last: Number(l.getAttribute('data-last')),
        points: (l.getAttribute('points') ?? '').split(' ').filter(Boolean).map((p: string) => Number(p.split(',')[1])),
      }));
    await untilAsync(async () => (await series('actors', 'ALIVE')).points.length >= 2);
    const before = await series('creations', 'creations');
    const handles = await Promise.all(Array.from({ length: 3 }, () => local.cluster.actor(JournalActor).options({ numCpus: 1, schedulingStrategy: nodeIdAffinity(ids.alpha) }).remote()));
    await Promise.all(handles.map((h) => h.ready({ timeoutMs: WAIT_MS })));
    try {
      // the page's newest sample agrees with what the cluster reports, once both have settled
      const agrees = async (): Promise<boolean> => {
        const [nodes, actors] = await Promise.all([local.cluster.nodes(), local.cluster.actors()]);
        const live = nodes.filter((n) => n.state !== 'DEAD');
        const cpuTotal = live.reduce((sum, n) => sum + (n.resources.total.CPU ?? 0), 0);
        const cpuUsed = live.reduce((sum, n) => sum + (n.resources.total.CPU ?? 0) - (n.resources.available.CPU ?? 0), 0);
        const alive = actors.filter((a) => a.state === 'ALIVE').length;
        const [a, u, t] = await Promise.all([series('actors', 'ALIVE'), series('cpu', 'cpuUsed'), series('cpu', 'cpuTotal')]);
        return a.last === alive && u.last === cpuUsed && t.last === cpuTotal && cpuUsed >= 3;
      };
      await untilAsync(agrees);
      // the three first starts show as a rate above zero in some sample (y above the baseline, 80)
      await untilAsync(async () => (await series('creations', 'creations')).points.some((y) => y < 80));
      const after = await series('creations', 'creations');
      assert.ok(after.points.length > before.points.length, 'new samples were added while the actors started');
      await screenshot(page, 'charts');
    } finally {
      await Promise.all(handles.map((h) => h.kill()));
      await page.close();
    }
  });

  test('a taint added on a node card shows on the card and keeps the next actor off that node; removing it from the card lets work back', async () => {
    const preferBeta = { schedulingStrategy: nodeIdAffinity(ids.beta, { soft: true }) };
    const before = await local.cluster.actor(JournalActor).options(preferBeta).remote();
    assert.is(nameOf((await before.ready({ timeoutMs: WAIT_MS })).nodeId), 'beta', 'without the taint the actor lands on the node it prefers');

    const page = await open(dash.url);
    await page.fill(`${card('beta')} .taint-form input`, 'dedicated=ml');
    await page.click(`${card('beta')} .taint-form button`);
    await page.waitForSelector(`${card('beta')} [data-taint="dedicated"]`);
    assert.is(await page.textContent(`${card('beta')} [data-taint="dedicated"]`), 'dedicated=ml×');
    assert.equal((await local.cluster.nodes()).find((n) => n.nodeId === ids.beta)!.taints, { dedicated: 'ml' }, 'the GCS has the taint');
    await page.waitForSelector('#feed li.node_taints_changed');

    const after = await local.cluster.actor(JournalActor).options(preferBeta).remote();
    const placed = nameOf((await after.ready({ timeoutMs: WAIT_MS })).nodeId);
    assert.ok(placed === 'alpha' || placed === 'gamma', `the next actor without a toleration lands elsewhere (on ${placed})`);
    await page.waitForSelector(`${card(placed!)} .actor-pill[data-actor-id="${after.actorId}"]`);
    await screenshot(page, 'taint-added');

    await page.click(`${card('beta')} [data-taint="dedicated"] button.x`);
    await page.waitForSelector(`${card('beta')} [data-taint="dedicated"]`, { state: 'detached' });
    assert.equal((await local.cluster.nodes()).find((n) => n.nodeId === ids.beta)!.taints, {});
    const again = await local.cluster.actor(JournalActor).options(preferBeta).remote();
    assert.is(nameOf((await again.ready({ timeoutMs: WAIT_MS })).nodeId), 'beta', 'with the taint gone it lands on beta again');
    await page.close();
    for (const h of [before, after, again]) await h.kill();
  });

  test('the Explain form answers where actor options would go, and why not elsewhere, without creating anything', async () => {
    const page = await open(`${dash.url}#cluster`);
    const before = (await local.cluster.actors()).length;
    await page.fill('#explain-input', JSON.stringify({ numGpus: 1 }));
    await page.click('#explain-form button[type="submit"]');
    await page.waitForSelector('#explain-result[data-decision="placed"]');
    const text = (await page.textContent('#explain-result'))!;
    assert.match(text, new RegExp(`^would be placed on beta \\(${ids.beta}\\), by its labelSelector`));
    assert.match(text, /alpha \(\S+\): had less total GPU than requested/);
    await page.fill('#explain-input', JSON.stringify({ labelSelector: { zone: 'north' } }));
    await page.click('#explain-form button[type="submit"]');
    await page.waitForSelector('#explain-result[data-decision="unschedulable"]');
    assert.match((await page.textContent('#explain-result'))!, /cannot be placed now: 0\/3 nodes are available: 3 node\(s\) didn't match label selector zone in \(north\)/);
    assert.is((await local.cluster.actors()).length, before, 'nothing was created');
    await screenshot(page, 'explain');
    await page.close();
  });

  test('a page on another origin cannot change a taint: its no-cors fetch, CORS fetches and form post all reach the dashboard and are refused; the node\'s taints are unchanged', async () => {
    const target = `${dash.url}api/nodes/${ids.beta}/taints`;
    const evil = await serveHtml(attackPage(target));
    try {
      const evilPort = (evil.address() as AddressInfo).port;
      // cross-site (localhost is another site than 127.0.0.1), and same-site from another port of the dashboard's host
      for (const origin of [`http://localhost:${evilPort}`, `http://127.0.0.1:${evilPort}`]) {
        const page = await browser.newPage();
        page.setDefaultTimeout(WAIT_MS);
        // the dashboard's answers as the browser's network layer saw them: Playwright reports no
        // response for a request the browser then fails (CORS, CORP), the DevTools protocol does
        const answers = await postAnswers(page, target);
        await page.goto(`${origin}/`);
        await page.waitForSelector('body[data-done="true"]');
        const results = (await page.evaluate('window.results')) as Record<string, unknown>;
        // every fetch settled as a network error: CORS for the two CORS ones; for the no-cors ones the
        // dashboard's Cross-Origin-Resource-Policy (same-origin), which withholds even an opaque answer
        assert.equal(results, { noCors: 'blocked', noCorsWithCookies: 'blocked', corsText: 'blocked', corsJson: 'blocked' }, origin);
        // the form post, whose text/plain body is JSON: {"evicted":"form:NoExecute","x":"="}
        const formAnswer = page.waitForResponse((r) => r.url() === target && r.request().method() === 'POST' && r.request().resourceType() === 'document');
        await page.click('#post-form button');
        const formStatus = (await formAnswer).status();
        await until(() => answers.length >= 4);
        assert.equal((await local.cluster.nodes()).find((n) => n.nodeId === ids.beta)!.taints, {}, `${origin}: the taints of beta are unchanged`);
        assert.is(formStatus, 403, `${origin}: the form post is refused`);
        assert.equal(answers, [403, 403, 403, 403], `${origin}: the no-cors fetches, the simple CORS fetch and the form post reached the dashboard and were refused (the JSON one stopped at its preflight)`);
        await page.close();
      }
    } finally {
      await new Promise<void>((resolve) => evil.close(() => resolve()));
    }
  });

  test('DNS rebinding: a page on a name that resolves to this machine is answered 421 HOST_NOT_ALLOWED, so it reads nothing', async () => {
    // the attacker's name, rebound to 127.0.0.1: the browser sends it as Host, and its origin is that name
    const rebinding = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--host-resolver-rules=MAP rebind.test 127.0.0.1'] });
    try {
      const page = await rebinding.newPage();
      page.setDefaultTimeout(WAIT_MS);
      const first = await page.goto(`http://rebind.test:${dash.port}/`);
      assert.is(first!.status(), 421);
      const read = (await page.evaluate(`fetch('/api/actors').then(async (r) => [r.status, (await r.json()).code])`)) as [number, string];
      assert.equal(read, [421, 'HOST_NOT_ALLOWED'], 'the same-origin read of /api/actors is refused');
    } finally {
      await rebinding.close();
    }
  });

  test('with a token the page is reached through its sign-in form, then changes a taint as before; a wrong token is refused', async () => {
    const token = 'browser-token-5c1e9a0d77';
    const guarded = await startDashboard({ cluster: local.cluster, port: 0, token });
    const page = await browser.newPage({ viewport: { width: 1440, height: 960 } });
    page.setDefaultTimeout(WAIT_MS);
    try {
      await page.goto(guarded.url);
      assert.is(new URL(page.url()).pathname, '/login', 'sent to the sign-in form');
      await page.fill('#login-token', 'wrong');
      await page.click('#login-form button[type="submit"]');
      await page.waitForSelector('#login-error[data-code="UNAUTHORIZED"]');
      await page.fill('#login-token', token);
      await page.click('#login-form button[type="submit"]');
      await page.waitForSelector('body[data-ready="true"]');
      assert.is(new URL(page.url()).pathname, '/');
      const cookie = (await page.context().cookies()).find((c) => c.name === `orrery_dashboard_${guarded.port}`);
      assert.equal([cookie?.httpOnly, cookie?.sameSite], [true, 'Strict']);
      assert.is(await page.evaluate('document.cookie'), '', 'the page\'s scripts cannot read the session cookie');

      await page.fill(`${card('gamma')} .taint-form input`, 'signed=in');
      await page.click(`${card('gamma')} .taint-form button`);
      await page.waitForSelector(`${card('gamma')} [data-taint="signed"]`);
      assert.equal((await local.cluster.nodes()).find((n) => n.nodeId === ids.gamma)!.taints, { signed: 'in' });
      await page.click(`${card('gamma')} [data-taint="signed"] button.x`);
      await page.waitForSelector(`${card('gamma')} [data-taint="signed"]`, { state: 'detached' });
      assert.equal((await local.cluster.nodes()).find((n) => n.nodeId === ids.gamma)!.taints, {});
      await screenshot(page, 'signed-in');
    } finally {
      await page.close();
      await guarded.close();
    }
  });

  test('a read-only dashboard shows no taint or label controls, says it is read-only, and still explains', async () => {
    const ro = await startDashboard({ cluster: local.cluster, port: 0, readOnly: true });
    try {
      const page = await open(ro.url);
      await page.waitForSelector(`${card('alpha')}[data-state="ALIVE"]`);
      assert.ok(await page.isVisible('#read-only'), 'the read-only badge shows');
      assert.is(await page.getAttribute('body', 'data-read-only'), 'true');
      assert.is(await page.$$eval('.node-forms, .taint-form, .label-form, .chip button.x', (els) => els.length), 0, 'no write controls');
      await page.fill('#explain-input', JSON.stringify({ numCpus: 1 }));
      await page.click('#explain-form button[type="submit"]');
      await page.waitForSelector('#explain-result[data-decision="placed"]');
      await screenshot(page, 'read-only');
      await page.close();
    } finally {
      await ro.close();
    }
  });

  test('a recorded failover trace replays in the page (orrery dashboard --trace): ALIVE → RESTARTING → PENDING → SCHEDULED → ALIVE', async () => {
    const file = join(dir, 'failover.trace');
    const recording = await recordTrace({ bus: (local.cluster as ClusterClient).bus, cluster: local.cluster.name, out: file });
    assert.ok(await recording.ready(5000), 'the cluster publishes inspection to the recorder');
    const victim = await local.addNode({ name: 'victim', labels: { role: 'victim' }, resources: { CPU: 2 } });
    const handle: ActorHandle<Journal> = await local.cluster.actor(JournalActor).options({ name: 'survivor', labelSelector: { role: 'victim' }, maxRestarts: -1 }).remote();
    assert.is((await handle.ready({ timeoutMs: WAIT_MS })).nodeId, victim.nodeId);
    const waiting = stateOf(handle, (i) => i.state === 'PENDING' && i.numRestarts === 1);
    await local.killNode(victim.nodeId);
    await waiting;
    const replacement = await local.addNode({ name: 'victim-2', labels: { role: 'victim' }, resources: { CPU: 2 } });
    assert.is((await stateOf(handle, (i) => i.state === 'ALIVE' && i.numRestarts === 1)).nodeId, replacement.nodeId);
    await recording.stop();

    const cli = new RunningCli(['dashboard', '--port', '0', '--trace', file], { ORRERY_ADDRESS: local.address });
    try {
      const url = (await cli.line('out', (l) => l.startsWith('dashboard: '))).slice('dashboard: '.length);
      const page = await open(`${url}#step/trace/actor/${handle.actorId}`);
      await page.waitForSelector('#source-switch .seg[data-source="trace"].active');
      await page.waitForSelector('#chart [data-state].is-current');
      assert.is(await page.textContent('#step-title'), 'survivor');
      await page.click('#step-first');
      const visited: string[] = [];
      for (;;) {
        const state = (await current(page))!;
        assert.is(await highlighted(page), state, 'the statechart highlights the state of the step');
        if (visited[visited.length - 1] !== state) visited.push(state);
        if (state === 'RESTARTING') await screenshot(page, 'trace-failover-restarting');
        if (await page.isDisabled('#step-forward')) break;
        await page.click('#step-forward');
      }
      assert.equal(visited, ['PENDING', 'onNode.SCHEDULED', 'onNode.ALIVE', 'RESTARTING', 'PENDING', 'onNode.SCHEDULED', 'onNode.ALIVE']);

      await page.click('#step-first');
      await page.click('#step-play');
      assert.is(await page.getAttribute('#step-play', 'data-playing'), 'true');
      await page.waitForSelector('#step-play[data-playing="false"]');
      assert.ok(await page.isDisabled('#step-forward'), 'play stopped at the last transition');
      assert.is(await highlighted(page), 'onNode.ALIVE', 'play ran to the last transition');
      assert.match((await page.textContent('#step-context'))!, /"numRestarts": 1/);
      await screenshot(page, 'trace-failover-end');
      await page.close();
    } finally {
      cli.signal('SIGINT');
      assert.is(await cli.exited, 0);
    }
    await handle.kill();
    await local.killNode(replacement.nodeId);
  });
}

test.run();
