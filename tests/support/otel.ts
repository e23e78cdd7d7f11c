/**
 * An in-memory OpenTelemetry tracer for tests: spans finished by a run are read back from an
 * InMemorySpanExporter. `withContextManager` registers an AsyncLocalStorage context manager (the
 * one a Node app would register), for the tests of a run joining its caller's active span.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Context, type ContextManager, context, ROOT_CONTEXT } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';

export function memoryTracer() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('agent-machine-tests');
  return {
    tracer,
    spans: (): ReadableSpan[] => exporter.getFinishedSpans(),
    named: (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name),
    reset: () => exporter.reset(),
  };
}

/** The span's parent's span id ('' for a root span). */
export const parentOf = (span: ReadableSpan): string => span.parentSpanContext?.spanId ?? '';
export const idOf = (span: ReadableSpan): string => span.spanContext().spanId;

class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

/** Runs `fn` with an AsyncLocalStorage context manager registered globally, then removes it. */
export async function withContextManager<T>(fn: () => Promise<T>): Promise<T> {
  const manager = new AsyncLocalContextManager();
  context.setGlobalContextManager(manager);
  try {
    return await fn();
  } finally {
    context.disable();
  }
}
