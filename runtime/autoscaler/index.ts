export * from './autoscaler.ts';
export * from './config.ts';
export * from './provider.ts';
export { LocalProvider } from './local-provider.ts';
export { CommandProvider } from './command-provider.ts';
export { providerFor } from './providers.ts';
export { autoscalerGcs, connectAutoscalerGcs } from './gcs.ts';
