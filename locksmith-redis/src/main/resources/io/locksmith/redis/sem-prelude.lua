-- Semaphore prelude (after wake-next.lua). A semaphore's permits are the members of a holders zset
-- (owner -> expiry in server ms); their tokens live in a hash beside it. Both keys expire with the
-- last permit; expired members are dropped lazily by every script, and counts only ever look at
-- unexpired members, so an expired permit is free even before it is dropped.

-- Server time in ms.
local function sem_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- A ms number as an integer string (tostring() switches to exponent notation for large numbers).
local function sem_ms(x)
  return string.format('%.0f', x)
end

-- Drops up to 100 permits whose lease ran out (a bound on one call's work; the rest go next time).
-- Returns how many were dropped.
local function sem_purge(holders, tokens, now)
  local gone = redis.call('ZRANGEBYSCORE', holders, '-inf', sem_ms(now), 'LIMIT', 0, 100)
  if #gone > 0 then
    redis.call('ZREM', holders, unpack(gone))
    redis.call('HDEL', tokens, unpack(gone))
  end
  return #gone
end

-- Permits held under unexpired leases.
local function sem_taken(holders, now)
  return redis.call('ZCOUNT', holders, '(' .. sem_ms(now), '+inf')
end

-- Makes key live at least ms from now; never shortens it.
local function sem_keep(key, ms)
  if redis.call('PTTL', key) < ms then
    redis.call('PEXPIRE', key, ms)
  end
end

-- Wakes up to n registered waiters, one PUBLISH each, but no more than permits are free (when no
-- count is stored, n as asked: the woken waiter's own attempt stores its declared count).
local function sem_wake(permits_key, holders, waiters, now, n, prefix, name)
  if n <= 0 or redis.call('EXISTS', waiters) == 0 then
    return -- nobody waits: the common case costs one lookup
  end
  local stored = tonumber(redis.call('GET', permits_key) or '')
  if stored then
    n = math.min(n, stored - sem_taken(holders, now))
  end
  for i = 1, n do
    if redis.call('EXISTS', waiters) == 0 then
      return
    end
    wake_next(waiters, prefix, name)
  end
end
