// A parameter server and its trainers (issue 15): the server is an actor, each trainer an actor
// that holds the server's handle — passed to its constructor — and calls it. The trainers are
// spread one per node with actor anti-affinity (each carries the label app=trainer and refuses a
// node that has one). Exits 1 when an actor it needs dies or the model does not converge.
//
//   npm run example:parameter-server                     a local cluster of four nodes
//   ORRERY_ADDRESS=nats://… npm run example:parameter-server    a running cluster
import { actorAffinity, labelNotIn } from 'orrery';
import { ParameterServerActor, TrainerActor } from './parameter-server-actors.ts';
import { exampleCluster, report } from './support/cluster.ts';
import { EXAMPLE_NODES } from './support/nodes.ts';

const TRAINERS = 3;
const STEPS = 20;
const target = [1, -2, 0.5, 3];

const { cluster, names, stop } = await exampleCluster(EXAMPLE_NODES['parameter-server']);
try {
  console.log('the parameter server:');
  const server = await cluster.actor(ParameterServerActor).remote(target.length);
  if ((await report('parameter server', server, names)) === undefined) throw new Error('the parameter server did not start');

  console.log(`${TRAINERS} trainers, each holding the server's handle, one per node (anti-affinity on app=trainer):`);
  const trainers = [];
  for (let i = 0; i < TRAINERS; i++) {
    const trainer = await cluster
      .actor(TrainerActor)
      .options({ labels: { app: 'trainer' }, schedulingStrategy: actorAffinity(labelNotIn('app', ['trainer'])) })
      .remote(server, target);
    if ((await report(`trainer ${i}`, trainer, names)) === undefined) throw new Error(`trainer ${i} did not start`);
    trainers.push(trainer);
  }

  const initial = (await server.call('pull')).weights;
  console.log(`training: ${TRAINERS} trainers × ${STEPS} steps, each a pull and a push to the server…`);
  const results = await Promise.all(trainers.map((t) => t.call('train', STEPS)));
  for (const [i, r] of results.entries()) console.log(`  trainer ${i} on ${r.node}: loss ${r.loss.toExponential(2)}, last version it pushed ${r.lastVersion}`);
  const { version, weights } = await server.call('pull');
  const loss = weights.reduce((sum, w, i) => sum + (w - target[i]!) ** 2, 0) / 2;
  const start = initial.reduce((sum, w, i) => sum + (w - target[i]!) ** 2, 0) / 2;
  console.log(`the server applied ${version} gradients: weights [${weights.map((w) => w.toFixed(3)).join(', ')}], target [${target.join(', ')}]`);
  console.log(`loss ${start.toFixed(3)} → ${loss.toExponential(2)}`);
  const nodes = new Set(results.map((r) => r.node));
  if (version !== TRAINERS * STEPS) throw new Error(`expected ${TRAINERS * STEPS} pushes, the server counted ${version}`);
  if (!(loss < start * 1e-3)) throw new Error('the model did not converge');
  if (nodes.size !== TRAINERS) throw new Error(`the trainers shared nodes: ${[...nodes].join(', ')}`);
} catch (err) {
  console.error(`parameter-server: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await stop();
}
