// lib/ — the pure scheduling core: labels, selectors, resources, the label index, the scheduling
// pipeline and its explanations. No I/O, no timers, no globals; randomness is passed in.
export * from './errors.ts';
export * from './selectors/expression.ts';
export type * from './scheduling/strategy.ts';
export * from './random.ts';
