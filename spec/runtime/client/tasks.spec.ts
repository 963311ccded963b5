import { startLocalCluster } from '../../../runtime/index.ts';
import { TASK_NODES, taskSuite } from '../../fixtures/tasks/scenarios.ts';

taskSuite('tasks (memory transport)', () => startLocalCluster({ transport: 'memory', nodes: TASK_NODES })).run();
