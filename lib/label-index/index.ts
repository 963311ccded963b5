export * from './label-index.ts';
