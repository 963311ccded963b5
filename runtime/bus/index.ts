// runtime/bus — one Bus interface, over NATS or an in-process broker with the same semantics.
export type { Bus, BusMsg, BusOptions, BusStatus, MsgHandler, RequestOptions, Subscription } from './bus.ts';
export * from './errors.ts';
export { MemoryBroker, MemoryBus, connectMemoryBus } from './memory.ts';
export { connectNatsBus, type NatsBusOptions, type TlsFiles } from './nats-connect.ts';
