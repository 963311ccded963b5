// lib/ — the pure scheduling core: labels, selectors, resources, the label index, the cluster
// state, the scheduling pipeline and its explanations. No I/O, no timers, no globals; randomness
// is passed in.
export * from './errors.ts';
export * from './random.ts';
export * from './labels/index.ts';
export * from './selectors/index.ts';
export * from './resources/index.ts';
export * from './label-index/index.ts';
export * from './cluster/index.ts';
export * from './scheduling/index.ts';
export * from './autoscaling/index.ts';
