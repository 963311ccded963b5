// Retakes the README's picture of the dashboard, docs/images/dashboard-cluster.png: a local cluster
// of three nodes (a nats-server, a GCS and raylet processes), the dashboard on a free port, and the
// page in headless chromium (spec/dashboard/browser.ts, as the browser specs drive it) while actors
// are created, killed and left pending over 90 s (--seconds), so that the charts over time — pending
// actors, actors by state, CPU and GPU used vs total, creations and schedule failures per second —
// have something to draw. The charts sample once a second from when the page opens.
//
//   node --conditions=source --import tsx scripts/screenshot-dashboard.ts [--out FILE] [--seconds N]
//
// Needs nats-server and chromium (ORRERY_CHROMIUM, default /usr/bin/chromium).
import { parseArgs } from 'node:util';
import { Exists } from '../lib/index.ts';
import { startLocalCluster, type ActorHandle } from '../runtime/index.ts';
import { startDashboard } from '../runtime/dashboard/server.ts';
import { ServiceActor, type Service } from '../examples/actors.ts';
import { launchChromium } from '../spec/dashboard/browser.ts';

const { values } = parseArgs({ options: { out: { type: 'string', default: 'docs/images/dashboard-cluster.png' }, seconds: { type: 'string', default: '90' } } });
/** The charts keep five minutes and fill from the right: 90 s of changes fill about a third of them (20 s, a sliver at the edge). */
const seconds = Number(values.seconds);
const WAVES = 30;
const WAIT_MS = 30_000;

const local = await startLocalCluster({
  transport: 'nats',
  nodes: [
    { name: 'head', resources: { CPU: 8 }, labels: { region: 'us', zone: 'us-east-1a' } },
    { name: 'worker-1', resources: { CPU: 8 }, labels: { region: 'eu', zone: 'eu-west-1a' } },
    { name: 'gpu-1', resources: { CPU: 4, GPU: 2 }, labels: { region: 'eu', accelerator: 'a100' }, taints: { gpu_node: 'true' } },
  ],
});
const dash = await startDashboard({ cluster: local.cluster, port: 0 });
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1100 } });
  await page.goto(dash.url);
  await page.waitForSelector('#charts figure.tchart polyline[data-series="ALIVE"]', { state: 'attached' });

  const live: ActorHandle<Service>[] = [];
  const made = new Map<string, number>();
  /** A named actor (`api-3`), as the actors table and the node cards show it. */
  const actor = (options: Record<string, unknown>, role: string): Promise<ActorHandle<Service>> => {
    made.set(role, (made.get(role) ?? 0) + 1);
    return local.cluster.actor(ServiceActor).options({ ...options, name: `${role}-${made.get(role)}` }).remote(role);
  };
  // thirty waves: services on the us and eu nodes until their CPUs run out (the rest wait for
  // resources), GPU work on the tainted node, some that can never be placed (no region ap; more GPUs
  // than there are), then some killed, which lets waiting ones start
  for (let wave = 0; wave < WAVES; wave++) {
    const started = Date.now();
    const created: Promise<ActorHandle<Service>>[] = [];
    if (wave < 15) created.push(actor({ numCpus: 1, labelSelector: { region: wave % 2 === 0 ? 'us' : 'eu' } }, 'api'));
    if (wave % 2 === 0 && wave < 20) created.push(actor({ numCpus: 1 }, 'worker'));
    if (wave === 5 || wave === 12) created.push(actor({ numCpus: 1, numGpus: 1, tolerations: { gpu_node: Exists() } }, 'trainer'));
    if (wave === 8 || wave === 18) created.push(actor({ numCpus: 1, labelSelector: { region: 'ap' } }, 'edge'));
    if (wave === 22) created.push(actor({ numGpus: 4, tolerations: { gpu_node: Exists() } }, 'big-trainer'));
    live.push(...(await Promise.all(created)));
    if (wave >= 16 && wave % 2 === 0) await Promise.all(live.splice(0, 2).map((h) => h.kill()));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, (seconds * 1000) / WAVES - (Date.now() - started))));
  }
  // the page's newest sample shows what the cluster reports now
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const alive = (await local.cluster.actors()).filter((a) => a.state === 'ALIVE').length;
    const shown = Number(await page.getAttribute('#charts figure[data-chart="actors"] polyline[data-series="ALIVE"]', 'data-last'));
    if (shown === alive) break;
    if (Date.now() > deadline) throw new Error(`the charts show ${shown} alive actors, the cluster ${alive}`);
    await page.waitForTimeout(200);
  }
  await page.screenshot({ path: values.out });
  console.log(`wrote ${values.out}`);
} finally {
  await browser.close();
  await dash.close();
  await local.stop();
}
