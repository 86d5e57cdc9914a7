-- KEYS[1] lock hash {o = owner, c = hold count, t = fencing token}, TTL = lease
-- KEYS[2] queue zset, KEYS[3] places zset (see fair-queue.lua), KEYS[4] fence: last token minted
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] 'n' new | 'r' re-entry only, ARGV[4] waiter id or '',
-- ARGV[5] longest backstop before a waiter re-checks (ms), ARGV[6] fence key TTL (ms),
-- ARGV[7] place timeout (ms)
-- Returns {1, token, holds} granted | {0, retry_ms, last} busy | {-1} re-entry whose hold is gone
redis.replicate_commands()
local owner = redis.call('HGET', KEYS[1], 'o')
if owner == ARGV[1] then
  -- re-entry, or this owner's leftover from an earlier attempt of the same acquisition: exactly as
  -- the exclusive lock; the queue plays no part in what an owner already holds
  if ARGV[4] ~= '' then
    redis.call('ZREM', KEYS[2], ARGV[4])
    redis.call('ZREM', KEYS[3], ARGV[4])
  end
  return hold_again(KEYS[1], ARGV[3], ARGV[2])
end
if ARGV[3] == 'r' then
  return {-1}
end
local t = redis.call('TIME')
local now_ms = fair_now(t)
local waiter = ARGV[4]
local head = fair_head(KEYS[2], KEYS[3], now_ms)
if not owner and (not head or head == waiter) then
  -- Free, and nobody is ahead of the caller: grant. Token as in acquire.lua, rule
  -- max(last + 1, server time in µs), formatted with %.0f (tostring() would print 1.7e+15).
  local micros = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('GET', KEYS[4]) or '0')
  local token = string.format('%.0f', math.max(micros, last + 1))
  redis.call('HSET', KEYS[1], 'o', ARGV[1], 'c', 1, 't', token)
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('SET', KEYS[4], token, 'PX', ARGV[6])
  if head then
    redis.call('ZREM', KEYS[2], waiter)
    redis.call('ZREM', KEYS[3], waiter)
  end
  return {1, token, 1}
end
-- Refused. A waiter is queued (or keeps its arrival and has its place refreshed) in the same atomic
-- step, so a release after this point finds it. The retry hint is at most a third of the place
-- timeout, so a live waiter refreshes its place well before it expires.
local timeout = tonumber(ARGV[7])
local retry = math.min(tonumber(ARGV[5]), math.max(1, math.floor(timeout / 3)))
if waiter ~= '' then
  local micros = tonumber(t[1]) * 1000000 + tonumber(t[2])
  redis.call('ZADD', KEYS[2], 'NX', string.format('%.0f', micros), waiter)
  redis.call('ZADD', KEYS[3], now_ms + timeout, waiter)
  -- both sets outlive the latest place in them (clients may use different place timeouts)
  if redis.call('PTTL', KEYS[2]) < timeout + 1000 then
    redis.call('PEXPIRE', KEYS[2], timeout + 1000)
    redis.call('PEXPIRE', KEYS[3], timeout + 1000)
  end
  if not head then
    head = waiter
  end
end
if head == waiter then
  -- first in line: a holder that crashes is not announced, so re-check when its lease runs out
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl >= 0 and ttl < retry then
    retry = math.max(ttl, 1)
  end
elseif head then
  -- behind someone: if the head is dead, its place expires then, and the caller may be next
  local expires = tonumber(redis.call('ZSCORE', KEYS[3], head))
  retry = math.max(1, math.min(retry, expires - now_ms + 1))
end
return {0, retry, redis.call('GET', KEYS[4]) or '0'}
