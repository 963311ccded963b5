import { startLocalCluster } from '../../runtime/index.ts';
import { startNatsServer, type NatsServerHandle } from '../helpers/nats-server.ts';
import { SCENARIO_NODES, scenarioSuite } from '../runtime/scenarios.ts';

let server: NatsServerHandle | undefined;
const s = scenarioSuite('seed scenarios (nats-server, GCS and three raylet processes)', async () => {
  server = await startNatsServer();
  return startLocalCluster({ transport: 'nats', address: server.url, nodes: SCENARIO_NODES });
});
s.after(async () => {
  await server?.stop();
});
s.run();
