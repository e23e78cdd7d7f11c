import { AgentMachineError } from '../state/errors';
import type { TelemetrySpan } from './telemetry-options';

/** `@opentelemetry/api` is not installed: it is an optional peer, needed only with `telemetry`. */
export class TelemetryDependencyMissingError extends AgentMachineError {
  static override get name(): string {
    return 'TelemetryDependencyMissingError';
  }

  constructor(options?: { cause?: unknown }) {
    super(
      'TELEMETRY_DEPENDENCY_MISSING',
      'createAgent({ telemetry }) needs the optional package "@opentelemetry/api", which is not installed ' +
        '(or could not be loaded). Run `npm install @opentelemetry/api`, or leave out `telemetry`.',
      options,
    );
  }
}

/** The two functions of `@opentelemetry/api` that tracing uses: the active context, and a context with a parent span. */
export interface OpenTelemetryApi {
  readonly context: { active(): unknown };
  readonly trace: { setSpan(context: unknown, span: TelemetrySpan): unknown };
}

const MODULE = '@opentelemetry/api';
let loading: Promise<OpenTelemetryApi> | null = null;

/**
 * Loads `@opentelemetry/api` at first use, so that it stays an optional peer. A failed load raises
 * TelemetryDependencyMissingError and is not cached (the user may install it and try again).
 */
export function loadOpenTelemetryApi(): Promise<OpenTelemetryApi> {
  if (!loading) {
    const attempt = importApi();
    loading = attempt;
    attempt.catch(() => {
      if (loading === attempt) loading = null;
    });
  }
  return loading;
}

async function importApi(): Promise<OpenTelemetryApi> {
  let loaded: Partial<OpenTelemetryApi> & { default?: Partial<OpenTelemetryApi> };
  try {
    // A variable specifier keeps bundlers from inlining the package or failing without it.
    const name: string = MODULE;
    loaded = await import(name);
  } catch (error) {
    throw new TelemetryDependencyMissingError({ cause: error });
  }
  const api = loaded.trace ? loaded : loaded.default;
  if (!api?.trace || !api.context)
    throw new TelemetryDependencyMissingError({ cause: new Error(`${MODULE} has no trace or context API`) });
  return api as OpenTelemetryApi;
}
