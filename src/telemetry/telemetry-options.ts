/**
 * The parts of OpenTelemetry's `Tracer` and `Span` that agent-machine uses, declared here so that
 * users who never trace need no `@opentelemetry/api` types. A tracer from
 * `trace.getTracer(name)` (or any `Tracer`) is one.
 */
export type TelemetryAttributeValue =
  | string
  | number
  | boolean
  | Array<string | null | undefined>
  | Array<number | null | undefined>
  | Array<boolean | null | undefined>;
export type TelemetryAttributes = Readonly<Record<string, TelemetryAttributeValue | undefined>>;

export interface TelemetrySpan {
  spanContext(): { readonly traceId: string; readonly spanId: string; readonly traceFlags: number };
  setAttribute(key: string, value: TelemetryAttributeValue): unknown;
  setAttributes(attributes: TelemetryAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  end(endTime?: number): void;
}

/** A link from a span to another one (a run decided later links to the run that waited). */
export interface TelemetrySpanLink {
  readonly context: ReturnType<TelemetrySpan['spanContext']>;
  readonly attributes?: TelemetryAttributes;
}

export interface TelemetryTracer {
  startSpan(
    name: string,
    options?: {
      kind?: number;
      attributes?: TelemetryAttributes;
      startTime?: number;
      links?: TelemetrySpanLink[];
    },
    context?: unknown,
  ): TelemetrySpan;
}

/** `createAgent({ telemetry })`: spans by the OpenTelemetry GenAI semantic conventions. */
export interface TelemetryOptions {
  /** Where spans go: `trace.getTracer('my-app')` of `@opentelemetry/api` (an optional peer). */
  readonly tracer: TelemetryTracer;
  /**
   * Record message content: the model's input and output messages on `chat` spans, tool
   * arguments on `execute_tool` spans. Off by default (content may be private).
   */
  readonly recordContent?: boolean;
}
