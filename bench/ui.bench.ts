/**
 * What the chat UI layer costs: one execution of N steps (a tool call per step, then an answer).
 * Without a store: `agent.execute` (the floor), `agent.stream` with its events iterated, and with
 * its UI message stream read to the end. With an in-memory session store (a chat needs one):
 * `agent.execute` with a session id, and a chat request through `createChatHandler` (a Web Request
 * in, the SSE body read to the end; no socket).
 */
import { InMemorySessionStore } from '../src/index';
import { createChatHandler } from '../src/ui/index';
import { measure, printTable } from './harness';
import { libraryAgent, question } from './workload';

const STEPS = [10, 100];

async function drain(stream: ReadableStream<unknown>): Promise<number> {
  let chunks = 0;
  for await (const _ of stream) chunks++;
  return chunks;
}

export default async function run(): Promise<void> {
  const rows: Record<string, string | number>[] = [];
  for (const steps of STEPS) {
    const plain = libraryAgent(steps);
    const agent = libraryAgent(steps, new InMemorySessionStore());
    const handler = createChatHandler({ agent });
    let session = 0;
    const runs = { runs: 15, warmup: 3 };
    const execute = await measure(() => plain.execute(question()), runs);
    const events = await measure(async () => {
      for await (const _ of plain.stream(question()));
    }, runs);
    let chunks = 0;
    const uiStream = await measure(async () => {
      chunks = await drain(plain.stream(question()).toUIMessageStream());
    }, runs);
    const stored = await measure(() => agent.execute(question(), { sessionId: `e${session++}` }), runs);
    const body = (id: string) =>
      JSON.stringify({ id, messages: [{ id: 'm', role: 'user', parts: [{ type: 'text', text: 'go' }] }] });
    const chat = await measure(async () => {
      const request = new Request('http://127.0.0.1/api/chat', {
        method: 'POST',
        body: body(`c${session++}`),
      });
      const response = await handler(request);
      if (response.status !== 200) throw new Error(`chat answered ${response.status}`);
      await response.text();
    }, runs);
    const perStep = (ms: number) => (ms * 1000) / steps;
    rows.push({
      steps,
      'execute, µs/step': perStep(execute),
      'stream + events, µs/step': perStep(events),
      'stream + UI chunks, µs/step': perStep(uiStream),
      'execute + store, µs/step': perStep(stored),
      'chat handler (SSE) + store, µs/step': perStep(chat),
      'UI chunks per run': chunks,
    });
  }
  printTable('Chat UI layer (medians of 15 runs)', rows);
}
