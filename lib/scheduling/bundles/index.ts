export * from './place.ts';
export * from './request.ts';
export * from './schedule-bundles.ts';
