export * from './cluster-state.ts';
export * from './node-order.ts';
