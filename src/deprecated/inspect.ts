/**
 * Names the main entry exported before they moved to `agent-machine/inspect`
 * (traces, the run viewer, the inspector): deprecated there for one release, each its new home's own value.
 */
import * as inspect from '../inspect/index';

/** @deprecated Import from `agent-machine/inspect`. */
export type ActorView = inspect.ActorView;
/** @deprecated Import from `agent-machine/inspect`. */
export type AgentView = inspect.AgentView;
/** @deprecated Import from `agent-machine/inspect`. */
export type AttachableActor = inspect.AttachableActor;
/** @deprecated Import from `agent-machine/inspect`. */
export const buildRunView = inspect.buildRunView;
/** @deprecated Import from `agent-machine/inspect`. */
export const combineInspectors = inspect.combineInspectors;
/** @deprecated Import from `agent-machine/inspect`. */
export const decodeTracedState = inspect.decodeTracedState;
/** @deprecated Import from `agent-machine/inspect`. */
export type DivergenceView = inspect.DivergenceView;
/** @deprecated Import from `agent-machine/inspect`. */
export type ErrorView = inspect.ErrorView;
/** @deprecated Import from `agent-machine/inspect`. */
export type EventView = inspect.EventView;
/** @deprecated Import from `agent-machine/inspect`. */
export const InvalidTraceError = inspect.InvalidTraceError;
/** @deprecated Import from `agent-machine/inspect`. */
export type InvalidTraceError = inspect.InvalidTraceError;
/** @deprecated Import from `agent-machine/inspect`. */
export type MessageView = inspect.MessageView;
/** @deprecated Import from `agent-machine/inspect`. */
export const NotARecordingError = inspect.NotARecordingError;
/** @deprecated Import from `agent-machine/inspect`. */
export type NotARecordingError = inspect.NotARecordingError;
/** @deprecated Import from `agent-machine/inspect`. */
export const NotARunError = inspect.NotARunError;
/** @deprecated Import from `agent-machine/inspect`. */
export type NotARunError = inspect.NotARunError;
/** @deprecated Import from `agent-machine/inspect`. */
export const parseRun = inspect.parseRun;
/** @deprecated Import from `agent-machine/inspect`. */
export type PathView = inspect.PathView;
/** @deprecated Import from `agent-machine/inspect`. */
export const readTrace = inspect.readTrace;
/** @deprecated Import from `agent-machine/inspect`. */
export const recordTrace = inspect.recordTrace;
/** @deprecated Import from `agent-machine/inspect`. */
export const renderRunView = inspect.renderRunView;
/** @deprecated Import from `agent-machine/inspect`. */
export const renderRunViewer = inspect.renderRunViewer;
/** @deprecated Import from `agent-machine/inspect`. */
export const replaySessions = inspect.replaySessions;
/** @deprecated Import from `agent-machine/inspect`. */
export type ReplaySummary = inspect.ReplaySummary;
/** @deprecated Import from `agent-machine/inspect`. */
export type RunInput = inspect.RunInput;
/** @deprecated Import from `agent-machine/inspect`. */
export type RunView = inspect.RunView;
/** @deprecated Import from `agent-machine/inspect`. */
export type RunViewerOptions = inspect.RunViewerOptions;
/** @deprecated Import from `agent-machine/inspect`. */
export const sanitizeAgentContext = inspect.sanitizeAgentContext;
/** @deprecated Import from `agent-machine/inspect`. */
export const sanitizeAgentEvent = inspect.sanitizeAgentEvent;
/** @deprecated Import from `agent-machine/inspect`. */
export type StepView = inspect.StepView;
/** @deprecated Import from `agent-machine/inspect`. */
export const summarizeAgentState = inspect.summarizeAgentState;
/** @deprecated Import from `agent-machine/inspect`. */
export type ToolView = inspect.ToolView;
/** @deprecated Import from `agent-machine/inspect`. */
export type Trace = inspect.Trace;
/** @deprecated Import from `agent-machine/inspect`. */
export const TRACE_FORMAT = inspect.TRACE_FORMAT;
/** @deprecated Import from `agent-machine/inspect`. */
export const TRACE_VERSION = inspect.TRACE_VERSION;
/** @deprecated Import from `agent-machine/inspect`. */
export type TraceActor = inspect.TraceActor;
/** @deprecated Import from `agent-machine/inspect`. */
export type TraceAgent = inspect.TraceAgent;
/** @deprecated Import from `agent-machine/inspect`. */
export type TracedAgent = inspect.TracedAgent;
/** @deprecated Import from `agent-machine/inspect`. */
export type TraceEntry = inspect.TraceEntry;
/** @deprecated Import from `agent-machine/inspect`. */
export type TraceEntryKind = inspect.TraceEntryKind;
/** @deprecated Import from `agent-machine/inspect`. */
export type TraceEntryOf<K extends inspect.TraceEntryKind> = inspect.TraceEntryOf<K>;
/** @deprecated Import from `agent-machine/inspect`. */
export type TraceRecorder = inspect.TraceRecorder;
/** @deprecated Import from `agent-machine/inspect`. */
export type TraceRecorderOptions = inspect.TraceRecorderOptions;
/** @deprecated Import from `agent-machine/inspect`. */
export const traceSchema = inspect.traceSchema;
/** @deprecated Import from `agent-machine/inspect`. */
export const traceStates = inspect.traceStates;
/** @deprecated Import from `agent-machine/inspect`. */
export const unpackState = inspect.unpackState;
/** @deprecated Import from `agent-machine/inspect`. */
export type UsageView = inspect.UsageView;
