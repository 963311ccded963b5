import { startLocalCluster } from '../../runtime/index.ts';
import { SCENARIO_NODES, scenarioSuite } from './scenarios.ts';

scenarioSuite('seed scenarios (memory transport)', () => startLocalCluster({ transport: 'memory', nodes: SCENARIO_NODES })).run();
