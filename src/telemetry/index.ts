/** `agent-machine/telemetry`: OpenTelemetry spans for runs (optional peer `@opentelemetry/api`). */
export { AgentTracing, type FollowedRun } from './agent-tracing';
export { genAiMessages } from './gen-ai-messages';
export { modelAttributes, type TracedModel } from './model-attributes';
export { type OpenTelemetryApi, TelemetryDependencyMissingError } from './open-telemetry-api';
export type {
  TelemetryAttributes,
  TelemetryAttributeValue,
  TelemetryOptions,
  TelemetrySpan,
  TelemetrySpanLink,
  TelemetryTracer,
} from './telemetry-options';
