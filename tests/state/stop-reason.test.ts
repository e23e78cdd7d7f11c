import { describe, expect, it } from 'vitest';
import { StopReason, stopReasonPriority, wasForceStopped } from '../../src/state/stop-reason';

describe('StopReason', () => {
  it('keeps the ten values of seed 000 in priority order, ErrorForbade 0 to Unknown 9', () => {
    expect(Object.values(StopReason).map((r) => [r, stopReasonPriority(r)])).toEqual([
      ['error_forbade', 0],
      ['stop_requested', 1],
      ['steps_limit_reached', 2],
      ['token_limit_reached', 3],
      ['time_limit_reached', 4],
      ['retry_limit_reached', 5],
      ['finish_reason_received', 6],
      ['user_requested', 7],
      ['completed', 8],
      ['unknown', 9],
    ]);
  });

  it('wasForceStopped() is true for all but Completed and FinishReasonReceived', () => {
    const natural = Object.values(StopReason).filter((r) => !wasForceStopped(r));
    expect(natural).toEqual(['finish_reason_received', 'completed']);
  });
});
