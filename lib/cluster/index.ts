export * from './cluster-state.ts';
export * from './sched-node.ts';
export * from './node-order.ts';
export type { ActorLabelCounts, ActorLabelRecord } from './actor-label-counts.ts';
