/**
 * Names the main entry exported before they moved to `agent-machine/telemetry`
 * (OpenTelemetry): deprecated there for one release, each its new home's own value.
 */
import * as telemetry from '../telemetry/index';

/** @deprecated Import from `agent-machine/telemetry`. */
export const AgentTracing = telemetry.AgentTracing;
/** @deprecated Import from `agent-machine/telemetry`. */
export type AgentTracing = telemetry.AgentTracing;
/** @deprecated Import from `agent-machine/telemetry`. */
export type FollowedRun = telemetry.FollowedRun;
/** @deprecated Import from `agent-machine/telemetry`. */
export const genAiMessages = telemetry.genAiMessages;
/** @deprecated Import from `agent-machine/telemetry`. */
export const modelAttributes = telemetry.modelAttributes;
/** @deprecated Import from `agent-machine/telemetry`. */
export type OpenTelemetryApi = telemetry.OpenTelemetryApi;
/** @deprecated Import from `agent-machine/telemetry`. */
export type TelemetryAttributes = telemetry.TelemetryAttributes;
/** @deprecated Import from `agent-machine/telemetry`. */
export type TelemetryAttributeValue = telemetry.TelemetryAttributeValue;
/** @deprecated Import from `agent-machine/telemetry`. */
export const TelemetryDependencyMissingError = telemetry.TelemetryDependencyMissingError;
/** @deprecated Import from `agent-machine/telemetry`. */
export type TelemetryDependencyMissingError = telemetry.TelemetryDependencyMissingError;
/** @deprecated Import from `agent-machine/telemetry`. */
export type TelemetryOptions = telemetry.TelemetryOptions;
/** @deprecated Import from `agent-machine/telemetry`. */
export type TelemetrySpan = telemetry.TelemetrySpan;
/** @deprecated Import from `agent-machine/telemetry`. */
export type TelemetrySpanLink = telemetry.TelemetrySpanLink;
/** @deprecated Import from `agent-machine/telemetry`. */
export type TelemetryTracer = telemetry.TelemetryTracer;
/** @deprecated Import from `agent-machine/telemetry`. */
export type TracedModel = telemetry.TracedModel;
