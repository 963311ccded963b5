export * from './label-index.ts';
export * from './topology-index.ts';
