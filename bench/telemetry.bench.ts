/**
 * What OpenTelemetry tracing costs per step: 100-step runs of the loop (scripted driver, one
 * trivial tool, so each step makes a chat and an execute_tool span) without telemetry (and with an
 * onEvent listener, which turns on the tool reports tracing also turns on), with a
 * tracer exporting to an InMemorySpanExporter through a SimpleSpanProcessor, and the same with
 * message content recorded. Interleaved rounds, so that load hits the variants alike.
 */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createAgent } from '../src/index';
import { median, now, printTable } from './harness';
import { libraryAgent, question } from './workload';

const STEPS = 100;

export default async function run(): Promise<void> {
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer(
    'bench',
  );
  const base = libraryAgent(STEPS).definition;
  const listen = { onEvent: () => undefined };
  const variants = [
    { label: 'no telemetry', agent: createAgent(base) },
    // tracing turns the run's tool reports on: this row is that part of its cost alone
    { label: 'no telemetry, onEvent listener', agent: createAgent(base), options: listen },
    { label: 'telemetry (InMemorySpanExporter)', agent: createAgent({ ...base, telemetry: { tracer } }) },
    {
      label: 'telemetry + recordContent',
      agent: createAgent({ ...base, telemetry: { tracer, recordContent: true } }),
    },
  ].map((v) => ({ options: {}, ...v, times: [] as number[] }));

  for (const v of variants) {
    const check = await v.agent.execute(question());
    if (check.stepCount() !== STEPS) throw new Error(`bad run: ${check.stepCount()} steps`);
  }
  const spansPerRun = exporter.getFinishedSpans().length / 2;
  for (let round = 0; round < 23; round++) {
    for (const v of variants) {
      exporter.reset();
      const start = now();
      for (let i = 0; i < 5; i++) await v.agent.execute(question(), v.options);
      if (round >= 3) v.times.push((now() - start) / 5);
    }
  }
  const floor = median(variants[0]?.times ?? []);
  printTable(
    `Telemetry, ${STEPS}-step runs (${spansPerRun} spans per traced run; median of 20 interleaved rounds)`,
    variants.map((v) => ({
      variant: v.label,
      'µs/step': (median(v.times) * 1000) / STEPS,
      'added µs/step': ((median(v.times) - floor) * 1000) / STEPS,
    })),
  );
}
