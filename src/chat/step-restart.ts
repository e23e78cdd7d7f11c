import type { UIMessageChunk } from '../ui/ui-message';

/**
 * The data of the `data-step-restarted` chunk a worker writes before it goes on with a chat's run
 * that another worker was running (it died, or was closed): the run resumes from its last saved
 * step, so step `stepNumber` (of the execution, from 1) runs again on `workerId`.
 */
export interface StepRestartedData {
  readonly stepNumber: number;
  readonly workerId: string;
}

/** The transient chunk that marks a restarted step in a chat's stream (the client's `onData` gets it). */
export function stepRestartedChunk(data: StepRestartedData): UIMessageChunk {
  return { type: 'data-step-restarted', data, transient: true };
}

/**
 * A pool chat's stream as the AI SDK's chat client must read it: where a worker took the run over
 * (`data-step-restarted`), the parts of the step it runs again are taken out of the message
 * (`reset-step`, AI SDK 7) when the stream had started that step, the step's `start-step` is not
 * sent twice, and the new worker's `start` of the same message is left out (the message goes on). So the message holds
 * each completed step once, and the restarted step as it finally ran. With `resetStep: false`
 * (AI SDK 6's client, which rejects `reset-step`), no `reset-step` is sent: the message keeps the
 * interrupted step's parts, then the step as it ran again, in a step of its own.
 */
export async function* mendRestartedSteps(
  chunks: AsyncIterable<UIMessageChunk>,
  options: { readonly resetStep?: boolean } = {},
): AsyncIterable<UIMessageChunk> {
  const resetStep = options.resetStep ?? true;
  let started: string | null | undefined;
  let steps = 0;
  let restarting = false;
  for await (const chunk of chunks) {
    if (chunk.type === 'data-step-restarted') {
      const { stepNumber } = chunk.data as StepRestartedData;
      yield chunk;
      if (stepNumber <= steps && resetStep) {
        yield { type: 'reset-step' };
        steps = stepNumber;
        restarting = true;
      } else if (stepNumber <= steps) steps = stepNumber - 1;
      continue;
    }
    if (chunk.type === 'start') {
      // the same message goes on (a run taken over after its first save)
      if (started === (chunk.messageId ?? null)) continue;
      // another message (the answer to queued messages): its steps count from 1
      started = chunk.messageId ?? null;
      steps = 0;
      restarting = false;
    } else if (chunk.type === 'start-step') {
      // the step-start part of the step run again is the one the message holds already
      if (restarting) {
        restarting = false;
        continue;
      }
      steps++;
    } else restarting = false;
    yield chunk;
  }
}
