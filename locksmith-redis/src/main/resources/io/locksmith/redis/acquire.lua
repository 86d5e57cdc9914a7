-- KEYS[1] lock hash {o = owner, c = hold count, t = fencing token}, TTL = lease
-- KEYS[2] waiters zset (member = waiter id, score = deadline in server ms)
-- KEYS[3] fence: last token minted for this name
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] 'n' new | 'r' re-entry only, ARGV[4] waiter id or '',
-- ARGV[5] longest backstop before a waiter re-checks (ms), ARGV[6] fence key TTL (ms),
-- ARGV[7] token rule: 't' max(last + 1, server time) | 'c' last + 1, server time only when no last
-- A hash without 'o' but with 'w' is a free lock reserved for waiter 'w' until it expires (see
-- release-handoff.lua); others are refused as if it were held.
-- Returns {1, token, holds} granted | {0, retry_ms, last} busy | {-1} re-entry whose hold is gone
redis.replicate_commands()
-- owner and reservation in one call: each redis.call costs the server about a microsecond, a fifth of
-- this script's run on a free lock
local fields = redis.call('HMGET', KEYS[1], 'o', 'w')
local owner = fields[1]
if owner == ARGV[1] then
  return hold_again(KEYS[1], ARGV[3], ARGV[2])
end
if ARGV[3] == 'r' then
  return {-1}
end
local free = not owner
if free then
  -- reserved for the waiter a cohort's last release woke (release-handoff.lua): that waiter only
  local reserved = fields[2]
  if reserved then
    if reserved == ARGV[4] then
      redis.call('DEL', KEYS[1])
    else
      free = false
    end
  end
end
if free then
  local token = mint_token(KEYS[3], ARGV[7]) -- mint-token.lua
  redis.call('HSET', KEYS[1], 'o', ARGV[1], 'c', 1, 't', token)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('SET', KEYS[3], token, 'PX', ARGV[6])
  if ARGV[4] ~= '' then
    redis.call('ZREM', KEYS[2], ARGV[4])
  end
  return {1, token, 1}
end
local retry = tonumber(ARGV[5])
local ttl = redis.call('PTTL', KEYS[1])
if ttl >= 0 and ttl < retry then
  retry = math.max(ttl, 1)
end
if ARGV[4] ~= '' then
  -- registered in the same atomic step as the refusal: a release after this point wakes us
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  redis.call('ZADD', KEYS[2], now_ms + retry + 2000, ARGV[4])
  -- only ever extend: another waiter may have registered with a longer deadline
  if redis.call('PTTL', KEYS[2]) < retry + 4000 then
    redis.call('PEXPIRE', KEYS[2], retry + 4000)
  end
end
return {0, retry, redis.call('GET', KEYS[3]) or '0'}
