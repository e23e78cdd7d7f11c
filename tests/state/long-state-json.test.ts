/**
 * `toJSON()` of a long state refers to the conversation for each step's input messages (`$ref`);
 * it must not copy those inputs on the way. It did: each step's input list made (and kept) an
 * array of all the messages before it, so the first `JSON.stringify` of a 10,000-step state took
 * seconds and the state kept ~800 MB of such arrays for as long as it lived.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentState } from '../../src/state/agent-state';
import { AppendOnlyList } from '../../src/state/append-only-list';
import { inProgressState } from '../persistence/fixtures';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('toJSON of a long state', () => {
  it('copies items of the message lists in proportion to the messages, not to steps times messages', () => {
    const state = inProgressState(300);
    const messages = state.messages().length;
    let copied = 0;
    const toArray = AppendOnlyList.prototype.toArray;
    vi.spyOn(AppendOnlyList.prototype, 'toArray').mockImplementation(function (
      this: AppendOnlyList<unknown>,
    ) {
      copied += this.size;
      return toArray.call(this);
    });
    const json = state.toJSON();
    expect(copied).toBeLessThanOrEqual(2 * messages);
    vi.restoreAllMocks();
    expect(AgentState.fromJSON(JSON.parse(JSON.stringify(json))).toJSON()).toEqual(json);
  });
});
