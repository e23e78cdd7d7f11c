/** The Lua scripts of RedisStreamStore: each touches the keys of one chat (one slot), all declared in KEYS. */

/** KEYS: the chat's active-stream key, the new stream's key. ARGV: stream id, lease ms. Replies 1 (claimed) or 0. */
export const BEGIN_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('DEL', KEYS[2])
return 1
`;

/** KEYS: active key, stream key. ARGV: stream id, lease ms, the chunks' JSON ('' for a renew). Replies 1, or 0 when not the open stream. */
export const APPEND_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('XADD', KEYS[2], '*', 'c', ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[2] + 60000)
end
return 1
`;

/**
 * KEYS: active key, the chat's handed-off list, the steer list of the stream read as open; ARGV:
 * that stream's id, the steer channel, the message's JSON. Replies the stream id, false (no stream
 * open), or `{ 'moved', id }` when another stream is open now (the caller tries again with its
 * keys: every key a script touches is declared). The handed-off list has no expiry: it holds a
 * message until a run settles it.
 */
export const STEER_SCRIPT = `
local id = redis.call('GET', KEYS[1])
if not id then return false end
if id ~= ARGV[1] then return {'moved', id} end
redis.call('RPUSH', KEYS[2], '{"streamId":' .. cjson.encode(id) .. ',"message":' .. ARGV[3] .. '}')
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('PEXPIRE', KEYS[3], redis.call('PTTL', KEYS[1]) + 60000)
redis.call('PUBLISH', ARGV[2], id)
return id
`;

/**
 * KEYS: active key, stream key, stop flag, steer list. ARGV: stream id, ttl seconds. The end mark is written
 * even when the lease ran out, so that readers of the stream finish.
 */
export const END_SCRIPT = `
local open = redis.call('GET', KEYS[1]) == ARGV[1]
if open or redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('XADD', KEYS[2], '*', 'end', '1')
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
if open then redis.call('DEL', KEYS[1]) end
redis.call('DEL', KEYS[3], KEYS[4])
return 1
`;

/**
 * KEYS: active key, the stop flag of the stream read as open; ARGV: that stream's id, the stop
 * channel. Replies the stream id, false, or `{ 'moved', id }` (as the steer script).
 */
export const STOP_SCRIPT = `
local id = redis.call('GET', KEYS[1])
if not id then return false end
if id ~= ARGV[1] then return {'moved', id} end
redis.call('SET', KEYS[2], '1', 'PX', redis.call('PTTL', KEYS[1]) + 60000)
redis.call('PUBLISH', ARGV[2], id)
return id
`;
