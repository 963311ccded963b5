// The public entry of orrery: everything users import comes from here (`import … from 'orrery'`).
export * from './lib/index.ts';
export * from './runtime/index.ts';
