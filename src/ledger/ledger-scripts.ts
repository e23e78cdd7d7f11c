/**
 * The Redis ledger's Lua scripts. Each runs atomically on the server: a reservation on several
 * scopes is all or none, whatever other processes do meanwhile. Their five keys (KEYS[1..5]):
 *
 * - limits: hash, scope -> "maxCost|maxTokens|period" ('' for no cap / no period)
 * - spent: hash, "c:" / "t:" / "p:" + scope -> the current period's cost, tokens and period key
 * - held: hash, "c:" / "t:" / "n:" + scope -> reserved cost, tokens and the number of reservations
 * - leases: sorted set, reservation key -> the server time (ms) its lease ends
 * - reservations: hash, reservation key -> "cost\ntokens\nscope\nscope..." (the amounts as given)
 *
 * Every key shares the ledger's hash tag (`{prefix}`), so on a Redis Cluster they live in one slot.
 * Lease times are the Redis server's (TIME), the same for every process; period keys are the
 * caller's (ARGV: today's and this month's), so an injected clock decides them.
 */

/** Shared functions: the server's time, a sweep of expired leases, dropping a reservation, a scope's period spending. */
const PRELUDE = `
local limits, spent, held, leases, reservations = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local function nowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function split(text, sep)
  local parts = {}
  for part in string.gmatch(text .. sep, '(.-)' .. sep) do parts[#parts + 1] = part end
  return parts
end
local function drop(key)
  local r = redis.call('HGET', reservations, key)
  redis.call('ZREM', leases, key)
  if not r then return end
  redis.call('HDEL', reservations, key)
  local parts = split(r, '\\n')
  for i = 3, #parts do
    local scope = parts[i]
    if redis.call('HINCRBY', held, 'n:' .. scope, -1) <= 0 then
      -- the last one out leaves exactly 0 (no float residue)
      redis.call('HDEL', held, 'n:' .. scope, 'c:' .. scope, 't:' .. scope)
    else
      redis.call('HINCRBYFLOAT', held, 'c:' .. scope, '-' .. parts[1])
      redis.call('HINCRBYFLOAT', held, 't:' .. scope, '-' .. parts[2])
    end
  end
end
local function sweep(now)
  local expired = redis.call('ZRANGEBYSCORE', leases, '-inf', now, 'LIMIT', 0, 100)
  for _, key in ipairs(expired) do drop(key) end
end
local function limitOf(scope)
  local l = redis.call('HGET', limits, scope)
  if not l then return nil end
  local parts = split(l, '|')
  return { cost = tonumber(parts[1]), tokens = tonumber(parts[2]), period = parts[3] }
end
local function periodOf(limit, day, month)
  if limit and limit.period == 'day' then return day end
  if limit and limit.period == 'month' then return month end
  return ''
end
-- the scope's spending of the current period: 0 when what is kept is of an earlier period
local function spentOf(scope, period)
  local kept = redis.call('HGET', spent, 'p:' .. scope)
  if kept == false or kept < period then return 0, 0, false end
  return tonumber(redis.call('HGET', spent, 'c:' .. scope) or '0'),
    tonumber(redis.call('HGET', spent, 't:' .. scope) or '0'), true
end
local function heldOf(scope)
  return tonumber(redis.call('HGET', held, 'c:' .. scope) or '0'),
    tonumber(redis.call('HGET', held, 't:' .. scope) or '0')
end
local function num(x) return string.format('%.17g', x) end
`;

/**
 * ARGV: key, cost ('' unbounded), tokens ('' unbounded), day, month, leaseMs, scopes...
 * Returns {'reserved'} | {'refused', scope, measure, spent, reserved, max} | {'unbounded', scope, measure}.
 */
export const RESERVE = `${PRELUDE}
local key, cost, tokens, day, month, leaseMs = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6])
local now = nowMs()
sweep(now)
drop(key)
local wanted = { cost = tonumber(cost), tokens = tonumber(tokens) }
for i = 7, #ARGV do
  local scope = ARGV[i]
  local limit = limitOf(scope)
  if limit then
    local spentCost, spentTokens = spentOf(scope, periodOf(limit, day, month))
    local heldCost, heldTokens = heldOf(scope)
    local used = { cost = spentCost, tokens = spentTokens }
    local reserved = { cost = heldCost, tokens = heldTokens }
    for _, measure in ipairs({ 'cost', 'tokens' }) do
      local max = limit[measure]
      if max then
        if wanted[measure] == nil then return { 'unbounded', scope, measure } end
        if used[measure] + reserved[measure] + wanted[measure] > max then
          return { 'refused', scope, measure, num(used[measure]), num(reserved[measure]), num(max) }
        end
      end
    end
  end
end
if cost == '' then cost = '0' end
if tokens == '' then tokens = '0' end
local scopes = {}
for i = 7, #ARGV do
  local scope = ARGV[i]
  scopes[#scopes + 1] = scope
  redis.call('HINCRBY', held, 'n:' .. scope, 1)
  redis.call('HINCRBYFLOAT', held, 'c:' .. scope, cost)
  redis.call('HINCRBYFLOAT', held, 't:' .. scope, tokens)
end
redis.call('HSET', reservations, key, cost .. '\\n' .. tokens .. '\\n' .. table.concat(scopes, '\\n'))
redis.call('ZADD', leases, now + leaseMs, key)
return { 'reserved' }
`;

/** ARGV: key, leaseMs. The lease of a reservation still held runs leaseMs from now. */
export const RENEW = `${PRELUDE}
redis.call('ZADD', leases, 'XX', nowMs() + tonumber(ARGV[2]), ARGV[1])
return 1
`;

/** ARGV: key, cost, tokens, day, month, scopes... Ends the reservation (if held) and charges every scope. */
export const SETTLE = `${PRELUDE}
local key, cost, tokens, day, month = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
sweep(nowMs())
drop(key)
for i = 6, #ARGV do
  local scope = ARGV[i]
  local period = periodOf(limitOf(scope), day, month)
  local _, _, current = spentOf(scope, period)
  if not current then
    redis.call('HSET', spent, 'p:' .. scope, period, 'c:' .. scope, '0', 't:' .. scope, '0')
  end
  redis.call('HINCRBYFLOAT', spent, 'c:' .. scope, cost)
  redis.call('HINCRBYFLOAT', spent, 't:' .. scope, tokens)
end
return 1
`;

/** ARGV: key. Ends the reservation (if held). */
export const RELEASE = `${PRELUDE}
sweep(nowMs())
drop(ARGV[1])
return 1
`;

/** ARGV: scope, day, month. Returns {cost, tokens, reservedCost, reservedTokens} as strings. */
export const USAGE = `${PRELUDE}
local scope = ARGV[1]
sweep(nowMs())
local spentCost, spentTokens = spentOf(scope, periodOf(limitOf(scope), ARGV[2], ARGV[3]))
local heldCost, heldTokens = heldOf(scope)
return { num(spentCost), num(spentTokens), num(heldCost), num(heldTokens) }
`;
