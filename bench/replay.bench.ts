/**
 * Replay (agent.replay): a recorded 1,000-step run replayed (model answers and tool results from
 * the recording, each step's request compared) next to the same run on the scripted driver;
 * 1,000 recorded 10-step sessions replayed one after another (as `agent-machine replay` does);
 * and what recording for replay adds to each step of a model-driver run (bytes of JSON).
 */
import { MockLanguageModelV4 } from 'ai/test';
import { AgentState, createAgent } from '../src/index';
import { collectGarbage, median, now, printTable } from './harness';

const ROUNDS = 9;

import { echo, libraryAgent, question } from './workload';

/** A recording as a store or a trace gives it back: the state's JSON, decoded. */
const saved = (state: AgentState) => AgentState.fromJSON(JSON.parse(JSON.stringify(state)));

export default async function run(): Promise<void> {
  const rows: Record<string, string | number>[] = [];
  for (const steps of [10, 100, 1_000]) {
    const agent = libraryAgent(steps);
    const recorded = saved(await agent.execute(question()));
    const check = await agent.replay(recorded);
    if (check.divergence) throw new Error(`replay diverged: ${JSON.stringify(check.divergence)}`);
    const repeat = Math.max(1, Math.floor(1_000 / steps));
    const time = async (fn: () => Promise<unknown>) => {
      collectGarbage();
      const start = now();
      for (let i = 0; i < repeat; i++) await fn();
      return (now() - start) / repeat;
    };
    // interleaved rounds, so that load on the machine hits both alike
    const scripted: number[] = [];
    const replayed: number[] = [];
    for (let round = 0; round < 2 + ROUNDS; round++) {
      const s = await time(() => agent.execute(question()));
      const r = await time(() => agent.replay(recorded));
      if (round >= 2) {
        scripted.push(s);
        replayed.push(r);
      }
    }
    rows.push({
      steps,
      'scripted run ms': median(scripted),
      'replay ms': median(replayed),
      'replay / scripted': median(replayed.map((r, i) => r / (scripted[i] as number))),
    });
  }
  printTable(
    'A recorded run replayed vs the same run on the scripted driver (median of 9 interleaved rounds)',
    rows,
  );

  const sessions = 1_000;
  const agent = libraryAgent(10);
  const recordings: AgentState[] = [];
  for (let i = 0; i < sessions; i++) recordings.push(saved(await agent.execute(question())));
  collectGarbage();
  const start = now();
  let diverged = 0;
  for (const recorded of recordings) if ((await agent.replay(recorded)).divergence) diverged++;
  const totalMs = now() - start;
  printTable(`${sessions} recorded 10-step sessions replayed one after another`, [
    { sessions, 'total ms': totalMs, 'ms per session': totalMs / sessions, diverged },
  ]);

  printTable('What recording for replay adds to a step (model driver, JSON bytes)', [await recordingBytes()]);
}

/** A 10-step model-driver run: each step's JSON with and without the fields replay reads. */
async function recordingBytes(): Promise<Record<string, string | number>> {
  let call = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      call++;
      const last = call % 10 === 0;
      return {
        content: last
          ? [{ type: 'text', text: 'done' }]
          : [
              {
                type: 'tool-call',
                toolCallId: `c${call}`,
                toolName: 'echo',
                input: JSON.stringify({ n: call }),
              },
            ],
        finishReason: last ? { unified: 'stop', raw: 'stop' } : { unified: 'tool-calls', raw: 'tool_calls' },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: undefined },
          outputTokens: { total: 5, text: 5, reasoning: undefined },
        },
        warnings: [],
      };
    },
  });
  const state = await createAgent({ model, tools: { echo }, systemPrompt: 'You echo numbers.' }).execute(
    question(),
  );
  // the state's JSON as a store keeps it (inputs as references to the conversation)
  const document = JSON.parse(JSON.stringify(state));
  const withFields = JSON.stringify(document).length;
  for (const { step } of document.execution.stepExecutions) {
    delete step.request;
    delete step.inferenceResponse.rawFinishReason;
    delete step.inferenceResponse.providerMetadata;
  }
  const without = JSON.stringify(document).length;
  const steps = state.steps();
  return {
    steps: steps.length,
    'state bytes without': without,
    'state bytes with': withFields,
    'added bytes/step': (withFields - without) / steps.length,
  };
}
