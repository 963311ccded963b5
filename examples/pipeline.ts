// A pipeline of stages that pass handles (issue 15): a builder actor creates the stages from inside
// the cluster — each constructed with the handle of the next — and returns their handles to the
// driver, which feeds documents to the first stage and reads the totals from the last. Each
// document travels split → normalize → count, actor to actor. Exits 1 when an actor it needs dies
// or the counts are wrong.
//
//   npm run example:pipeline                              a local cluster of three nodes
//   ORRERY_ADDRESS=nats://… npm run example:pipeline      a running cluster
import { PipelineBuilderActor } from './pipeline-stages.ts';
import { exampleCluster, report } from './support/cluster.ts';
import { EXAMPLE_NODES } from './support/nodes.ts';

const documents = [
  'The actor model: actors send messages to actors.',
  'An actor that holds a handle can call the actor behind it.',
  'Handles travel in messages, and actors create actors.',
];

const { cluster, names, stop } = await exampleCluster(EXAMPLE_NODES.pipeline);
try {
  const builder = await cluster.actor(PipelineBuilderActor).remote();
  if ((await report('pipeline builder', builder, names)) === undefined) throw new Error('the builder did not start');
  const stages = await builder.call('build', ['split', 'normalize', 'count']);
  console.log('stages, created by the builder and returned as handles (SPREAD):');
  for (const stage of stages) if ((await report(`stage ${(await stage.call('stats')).kind}`, stage, names)) === undefined) throw new Error('a stage did not start');

  const [head, , sink] = stages;
  let words = 0;
  for (const doc of documents) words += await head!.call('process', doc);
  console.log(`fed ${documents.length} documents to the first stage; ${words} words reached the last`);
  for (const stage of stages) {
    const { kind, node, handled } = await stage.call('stats');
    console.log(`  ${kind.padEnd(10)} on ${node}: ${handled} message(s)`);
  }
  const top = await sink!.call('top', 3);
  console.log(`most frequent: ${top.map(([w, n]) => `${w} ×${n}`).join(', ')}`);
  const expected = documents.join(' ').split(/\s+/).filter(Boolean).length;
  if (words !== expected) throw new Error(`expected ${expected} words counted, got ${words}`);
  if (top[0]?.[0] !== 'actors' && top[0]?.[0] !== 'actor') throw new Error(`unexpected top word ${top[0]?.[0]}`);
} catch (err) {
  console.error(`pipeline: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
} finally {
  await stop();
}
