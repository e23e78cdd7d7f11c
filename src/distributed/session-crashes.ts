/**
 * Poison sessions: a session whose run keeps killing its worker (memory, a crashing native tool)
 * is told apart from one whose worker merely died. Each run notes, in the session's slot, the
 * stored version it started from and how many runs before it died in a row; a run that ends in
 * any way but a death removes the note. A run that finds a note left behind knows the previous
 * run died: it counts one more death in a row if the session has no new checkpoint since that
 * run started, else starts the count again at one. `maxSessionCrashes` deaths in a row fail the
 * session's job with PoisonSessionError; any other death is taken over and resumed.
 */
import { taggedKey } from './redis-keys';
import type { RedisLockCommands } from './redis-types';

/** KEYS: the note. ARGV: the stored version ('' for none), the run's token, the limit, a TTL in s. Replies the deaths in a row. */
const START_SCRIPT = `
local note = redis.call('GET', KEYS[1])
local deaths = 0
if note then
  local version, count = string.match(note, '^([^|]*)|(%d+)|')
  if version == ARGV[1] then deaths = tonumber(count) + 1 else deaths = 1 end
end
if deaths >= tonumber(ARGV[3]) then
  redis.call('DEL', KEYS[1])
else
  redis.call('SET', KEYS[1], ARGV[1] .. '|' .. deaths .. '|' .. ARGV[2], 'EX', ARGV[4])
end
return deaths
`;

/** KEYS: the note; ARGV: the run's token. Removes the note if it is this run's. */
const END_SCRIPT = `
local note = redis.call('GET', KEYS[1])
if note and string.sub(note, -string.len(ARGV[1]) - 1) == '|' .. ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;

/** How long a note outlives its run at most (a week): a session never run again leaves no key for ever. */
const NOTE_TTL_SECONDS = 7 * 24 * 3600;

export class SessionCrashes {
  constructor(
    private readonly redis: RedisLockCommands,
    private readonly prefix: string,
    private readonly limit: number,
  ) {}

  key(sessionId: string): string {
    return taggedKey(this.prefix, sessionId, 'run');
  }

  /**
   * Notes that `token`'s run of the session starts from `version`; resolves with the deaths in a
   * row before it, and whether that makes the session a poison one (the note is then removed).
   */
  async start(
    sessionId: string,
    version: number | null,
    token: string,
  ): Promise<{ deaths: number; poison: boolean }> {
    const deaths = Number(
      await this.redis.eval(
        START_SCRIPT,
        1,
        this.key(sessionId),
        version === null ? '' : String(version),
        token,
        String(this.limit),
        String(NOTE_TTL_SECONDS),
      ),
    );
    return { deaths, poison: deaths >= this.limit };
  }

  /** The run ended (not by a death): its note goes. */
  async end(sessionId: string, token: string): Promise<void> {
    await this.redis.eval(END_SCRIPT, 1, this.key(sessionId), token);
  }
}
