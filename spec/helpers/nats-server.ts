// Specs start their private nats-server with the runtime's own launcher (runtime/local/nats-server.ts):
// a free port of 127.0.0.1, never 4222 (where a shared server may run); JetStream in a temporary
// store on request; `stop()` kills it, waits for the exit and removes the store.
export { canConnect, freePort, startNatsCluster, startNatsServer, type NatsClusterHandle, type NatsServerHandle } from '../../runtime/local/nats-server.ts';
