export { NotARecordingError, type ReplaySummary, replaySessions } from './replay-store';
export {
  type ActorView,
  type AgentView,
  buildRunView,
  type DivergenceView,
  type ErrorView,
  type EventView,
  type MessageView,
  NotARunError,
  type PathView,
  parseRun,
  type RunInput,
  type RunView,
  type StepView,
  type ToolView,
  type UsageView,
} from './run-model';
export { type RunViewerOptions, renderRunView, renderRunViewer } from './run-viewer';
export {
  combineInspectors,
  sanitizeAgentContext,
  sanitizeAgentEvent,
  summarizeAgentState,
} from './stately';
export { unpackState } from './trace-blobs';
export { decodeTracedState, readTrace, type TracedAgent, traceStates } from './trace-reader';
export {
  type AttachableActor,
  recordTrace,
  type TraceRecorder,
  type TraceRecorderOptions,
} from './trace-recorder';
export {
  InvalidTraceError,
  TRACE_FORMAT,
  TRACE_VERSION,
  type Trace,
  type TraceActor,
  type TraceAgent,
  type TraceEntry,
  type TraceEntryKind,
  type TraceEntryOf,
  traceSchema,
} from './trace-schema';
