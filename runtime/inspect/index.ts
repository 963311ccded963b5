// runtime/inspect — the inspection stream (docs/inspection.md): machine transitions as plain data on
// `orrery.<cluster>.inspect.<machine>.<id>` while someone watches, its recorder and trace files, the
// replay format, and statechart drawings of the machine definitions.
export type { InspectRecord, MachineKind, InspectAck, InspectWatch } from '../../protocols/messages/inspect.ts';
export { MACHINE_KINDS } from '../../protocols/messages/inspect.ts';
export { InspectionMapper, statePath, type UnsequencedRecord } from './mapper.ts';
export { toPlain, toPlainObject, type PlainLimits } from './plain.ts';
export { InspectPublisher, inspectionEnabled, type InspectableSystem, type InspectPublisherOptions, type InspectPublisherStats } from './publisher.ts';
export { watchInspection, type WatchOptions } from './watch.ts';
export { recordTrace, type RecordTraceOptions, type TraceRecording } from './recorder.ts';
export { TRACE_FORMAT, TRACE_VERSION, TraceFormatError, TraceWriter, parseTrace, readTrace, traceLine, type Trace, type TraceHeader } from './trace-file.ts';
export { eventName, filterRecords, formatContext, formatRecord, type ReplayFilter } from './replay.ts';
export { ackSubject, watchSubject } from '../../protocols/inspect-subjects.ts';
