/** The Lua scripts of RedisSessionStore: each touches the keys of one session (one slot), all declared in KEYS. */

/**
 * The check-and-append of a save, atomic because Redis runs a script alone. The stored version is
 * read from the head of the newest journal record (`{"journal":1,"v":N,"gen":"…"`), or, for a
 * session saved before the journal, from its document (which the append then replaces). KEYS (one
 * session's, one slot): the journal list, the document from before the journal, the newest
 * snapshot's position. ARGV: the expected version ('' for none), the record, the record's kind,
 * the generation a delta continues ('' for a snapshot), '1' once the old key layout was checked
 * for this session, the idle TTL in seconds ('' for none: the keys are kept). Replies `{ 'ok' }`, `{ 'conflict', version }`, `{ 'stale' }` (a delta whose
 * base is not the stored head: send a snapshot), `{ 'absent' }` (nothing stored and the old
 * layout not checked yet) or `{ 'corrupt' }`.
 */
export const SAVE_SCRIPT = `
local actual = ''
local gen = ''
local newest = redis.call('LINDEX', KEYS[1], -1)
local legacy = false
if newest then
  local head = string.sub(newest, 1, 200)
  actual, gen = string.match(head, '^{"journal":%d+,"v":(%d+),"gen":"([^"]*)"')
  if not actual then return {'corrupt'} end
elseif redis.call('EXISTS', KEYS[2]) == 1 then
  legacy = true
  local head = redis.call('GETRANGE', KEYS[2], 0, 63)
  actual = string.match(head, '^{"version":([1-9][0-9]*),')
  if not actual then
    local ok, doc = pcall(cjson.decode, redis.call('GET', KEYS[2]))
    local v = ok and type(doc) == 'table' and doc['version']
    if type(v) ~= 'number' or v < 1 or v % 1 ~= 0 then return {'corrupt'} end
    actual = string.format('%.0f', v)
  end
elseif ARGV[5] ~= '1' then
  return {'absent'}
end
-- fencing (FENCE): a save given a session lock (KEYS[4], in the session's slot) writes only while
-- it holds the token ARGV[7]; checked before the version, so a holder that lost its lock learns
-- that, even after the new holder has saved
if KEYS[4] and redis.call('GET', KEYS[4]) ~= ARGV[7] then return {'fenced'} end
if actual ~= ARGV[1] then return {'conflict', actual} end
if ARGV[3] == 'delta' and gen ~= ARGV[4] then return {'stale'} end
-- RPUSH answers the new length: the record's position is one less
local length = redis.call('RPUSH', KEYS[1], ARGV[2])
if ARGV[3] == 'snapshot' then redis.call('SET', KEYS[3], length - 1) end
if legacy then redis.call('DEL', KEYS[2]) end
if ARGV[6] ~= '' then
  redis.call('EXPIRE', KEYS[1], ARGV[6])
  redis.call('EXPIRE', KEYS[3], ARGV[6])
end
return {'ok'}
`;

/**
 * Reads what a load needs in one step: the records from the newest snapshot on (the position and
 * LRANGE; LLEN only when that finds nothing). KEYS: the journal,
 * the snapshot position, the document from before the journal. Replies `{ 'ok', records }`,
 * `{ 'document', text }` (no journal, a document from before it), `{ 'none' }`, or
 * `{ 'position', position }` when the position is missing, not a whole number, or not in the list
 * (damage: a save always sets it with the first record).
 */
export const LOAD_SCRIPT = `
local position = redis.call('GET', KEYS[2])
local from = position and string.match(position, '^%d+$') and tonumber(position)
if from then
  local records = redis.call('LRANGE', KEYS[1], from, -1)
  if #records > 0 then return {'ok', records} end
end
if redis.call('LLEN', KEYS[1]) == 0 then
  local document = redis.call('GET', KEYS[3])
  if document then return {'document', document} end
  return {'none'}
end
return {'position', position or ''}
`;

/**
 * Writes a fork, unless the fork's id is taken: its records (the source's first records, read
 * before, then the fork's newest snapshot and the deltas after it) and its snapshot position.
 * KEYS: the fork's journal, its document key, its snapshot position (one slot: the fork's).
 * ARGV: the position of the fork's snapshot, then the records.
 */
export const FORK_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
for i = 2, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
redis.call('SET', KEYS[3], ARGV[1])
return 1
`;

/** Writes a copy of a document from before the journal. KEYS: the fork's journal, its document; ARGV: the document. */
export const FORK_DOCUMENT_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('SET', KEYS[2], ARGV[1])
return 1
`;

/**
 * Moves a session from the old key layout to its keys in the new one, unless the new keys hold
 * it already. KEYS: the old journal, snapshot position and document, then the new ones. Runs only
 * where the old keys exist: a single Redis, or a Cluster under a prefix with a hash tag of its own
 * (the only places the old layout could be written), where all these keys share a slot.
 */
export const MIGRATE_SCRIPT = `
if redis.call('EXISTS', KEYS[4]) == 1 or redis.call('EXISTS', KEYS[6]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('RENAME', KEYS[1], KEYS[4])
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('RENAME', KEYS[2], KEYS[5]) end
end
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('RENAME', KEYS[3], KEYS[6]) end
return 1
`;
