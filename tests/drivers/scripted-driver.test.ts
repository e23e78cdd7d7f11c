/** scriptedDriver refuses what it cannot play with a typed error naming the argument. */
import { describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InvalidArgumentError } from '../../src/state/errors';

describe('scriptedDriver', () => {
  it('refuses an empty script with InvalidArgumentError (INVALID_ARGUMENT), not a bare TypeError', () => {
    const error = (() => {
      try {
        scriptedDriver([]);
      } catch (caught) {
        return caught;
      }
      return null;
    })();
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    expect((error as Error).message).toMatch(/^Invalid scriptedDriver\(script\): .*at least one/);
  });
});
