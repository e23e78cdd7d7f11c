import { readUIMessageStream, type UIMessageChunk as SdkChunk, type UIMessage } from 'ai';
import { readUIMessageStream as readUIMessageStream6 } from 'ai6';
import { describe, expect, it } from 'vitest';
import { mendRestartedSteps, stepRestartedChunk } from '../../src/chat/step-restart';
import type { UIMessageChunk } from '../../src/ui/ui-message';

const search: UIMessageChunk[] = [
  { type: 'start-step' },
  { type: 'tool-input-available', toolCallId: 'c1', toolName: 'search', input: { q: 'lisbon' } },
  { type: 'tool-output-available', toolCallId: 'c1', output: 'found' },
  { type: 'finish-step' },
];
const text = (id: string, words: string): UIMessageChunk[] => [
  { type: 'text-start', id },
  { type: 'text-delta', id, delta: words },
];
const answer = (words: string): UIMessageChunk[] => [
  { type: 'start-step' },
  ...text('e1:2:text', words),
  { type: 'text-end', id: 'e1:2:text' },
  { type: 'finish-step' },
];
const start: UIMessageChunk = { type: 'start', messageId: 'e1' };
const finish: UIMessageChunk = { type: 'finish', finishReason: 'stop' };
const restarted = (stepNumber: number) => stepRestartedChunk({ stepNumber, workerId: 'w2' });

/** The message the AI SDK's own reader builds from the mended stream, and the data chunks it saw. */
async function assemble(chunks: readonly UIMessageChunk[]) {
  async function* source() {
    yield* chunks;
  }
  const mended: UIMessageChunk[] = [];
  for await (const chunk of mendRestartedSteps(source())) mended.push(chunk);
  let last: UIMessage | undefined;
  const stream = new ReadableStream<SdkChunk>({
    start(controller) {
      for (const chunk of mended) controller.enqueue(chunk as SdkChunk);
      controller.close();
    },
  });
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) last = message;
  return { parts: last?.parts ?? [], mended };
}

const completed = [
  { type: 'step-start' },
  { type: 'tool-search', toolCallId: 'c1', state: 'output-available', output: 'found' },
  { type: 'step-start' },
  { type: 'text', text: 'word0 word1 word2', state: 'done' },
];

describe('mendRestartedSteps', () => {
  it('a step cut mid-answer and run again by another worker is in the message once, as it ran again', async () => {
    const { parts, mended } = await assemble([
      start,
      ...search,
      { type: 'start-step' },
      ...text('e1:2:text', 'word0 wo'),
      restarted(2),
      start,
      ...answer('word0 word1 word2'),
      finish,
    ]);
    expect(parts).toMatchObject(completed);
    expect(parts).toHaveLength(4);
    expect(mended.filter((c) => c.type === 'reset-step')).toHaveLength(1);
    expect(mended.filter((c) => c.type === 'start')).toHaveLength(1);
  });

  it('a step that finished but was not saved before the crash is replaced by its second run', async () => {
    const { parts } = await assemble([
      start,
      ...search,
      ...answer('word0 word1 wordX'),
      restarted(2),
      start,
      ...answer('word0 word1 word2'),
      finish,
    ]);
    expect(parts).toMatchObject(completed);
    expect(parts).toHaveLength(4);
  });

  it('a run taken over after a saved step goes on with the next step, nothing taken out', async () => {
    const { parts, mended } = await assemble([
      start,
      ...search,
      restarted(2),
      start,
      ...answer('word0 word1 word2'),
      finish,
    ]);
    expect(parts).toMatchObject(completed);
    expect(parts).toHaveLength(4);
    expect(mended.some((c) => c.type === 'reset-step')).toBe(false);
  });

  it('passes the marker on as a transient data chunk (for onData)', async () => {
    const { mended, parts } = await assemble([start, ...search, restarted(2), start, ...answer('x'), finish]);
    expect(mended).toContainEqual({
      type: 'data-step-restarted',
      data: { stepNumber: 2, workerId: 'w2' },
      transient: true,
    });
    expect(parts.some((p) => p.type === 'data-step-restarted')).toBe(false);
  });

  it("resetStep: false (AI SDK 6's client rejects reset-step): its reader ends the message with the step as it ran again", async () => {
    const cut = [
      start,
      ...search,
      { type: 'start-step' },
      ...text('e1:2:text', 'word0 wo'),
      restarted(2),
      start,
      ...answer('word0 word1 word2'),
      finish,
    ] as UIMessageChunk[];
    async function read6(options: { resetStep: boolean }) {
      async function* source() {
        yield* cut;
      }
      const mended: UIMessageChunk[] = [];
      for await (const chunk of mendRestartedSteps(source(), options)) mended.push(chunk);
      const stream = new ReadableStream({
        start(controller) {
          for (const chunk of mended) controller.enqueue(chunk);
          controller.close();
        },
      });
      let last: { parts: { type: string; text?: string }[] } | undefined;
      for await (const message of readUIMessageStream6({ stream: stream as never, terminateOnError: true }))
        last = message as never;
      return { mended, parts: last?.parts ?? [] };
    }
    const { mended, parts } = await read6({ resetStep: false });
    expect(mended.some((c) => c.type === 'reset-step')).toBe(false);
    expect(parts.map((p) => [p.type, p.text])).toEqual([
      ['step-start', undefined],
      ['tool-search', undefined],
      ['step-start', undefined],
      ['text', 'word0 wo'],
      ['step-start', undefined],
      ['text', 'word0 word1 word2'],
    ]);
  });

  it("drops only a repeated start of the same message (a new execution's start goes through)", async () => {
    const other: UIMessageChunk = { type: 'start', messageId: 'e2' };
    const { mended } = await assemble([start, ...search, restarted(1), start, other, ...answer('x'), finish]);
    expect(mended.filter((c) => c.type === 'start')).toEqual([start, other]);
  });
});
