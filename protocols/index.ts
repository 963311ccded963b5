// protocols/ — what travels between orrery processes: subjects, message types and their
// validators, the msgpack envelope, replies and wire errors.
export * from './subjects.ts';
export * from './errors.ts';
export * from './codec.ts';
export * from './reply.ts';
export * from './validate.ts';
export * from './messages/registry.ts';
export * from './messages/node.ts';
export * from './messages/view.ts';
export { wireError, reply } from './messages/reply.ts';
export * from './messages/actor.ts';
export * from './messages/cluster.ts';
export * from './code-source.ts';
export * from './inspect-subjects.ts';
