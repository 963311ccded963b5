export type * from './types.ts';
export { decide, unitsIn } from './decide.ts';
