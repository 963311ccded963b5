// The dashboard page in a real browser (Debian's chromium, headless, driven by playwright-core)
// against a GCS and raylet processes on a real nats-server: the cluster view lists nodes and actors;
// stepping an actor's machine back and forward moves the highlighted state; a taint added on a node
// card changes the card and where the next actor lands; a recorded failover trace, loaded with
// `orrery dashboard --trace FILE`, steps through ALIVE → RESTARTING → PENDING → SCHEDULED → ALIVE.
// Screenshots go to artifacts/screenshots/ for a reviewer. Without chromium the suite fails with
// the command that installs it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { filter, firstValueFrom, timeout } from 'rxjs';
import type { Browser, Page } from 'playwright-core';
import { nodeIdAffinity } from '../../lib/index.ts';
import { ClusterClient } from '../../runtime/client/cluster.ts';
import { startDashboard, type Dashboard } from '../../runtime/dashboard/server.ts';
import { recordTrace } from '../../runtime/inspect/recorder.ts';
import { startLocalCluster, type ActorHandle, type ActorInfo, type LocalCluster } from '../../runtime/index.ts';
import { JournalActor, type Journal } from '../runtime/client/failover-actors.ts';
import { RunningCli } from '../runtime/cli/process.ts';
import { chromiumMissing, launchChromium, screenshot } from '../dashboard/browser.ts';

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
    // Node machines heartbeat: once one is listed, the GCS publishes inspection to this page
    await page.waitForSelector('#instance-list .instance[data-machine="node"]');
    const handle = await local.cluster.actor(JournalActor).options({ name: 'stepper' }).remote();
    await handle.ready({ timeoutMs: WAIT_MS });
    const item = `#instance-list .instance[data-machine="actor"][data-id="${handle.actorId}"]`;
    await page.waitForFunction(`document.querySelector('${item}')?.querySelector('.istate')?.textContent === 'onNode.ALIVE'`);
    await page.click(item);
    await page.waitForFunction(`document.querySelector('#chart [data-state].is-current')?.getAttribute('data-state') === 'onNode.ALIVE'`);
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
