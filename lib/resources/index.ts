export * from './quantity.ts';
export * from './resource-set.ts';
