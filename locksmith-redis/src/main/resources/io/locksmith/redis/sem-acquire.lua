-- KEYS[1] permit count in force (no TTL), KEYS[2] holders zset (owner -> expiry ms),
-- KEYS[3] tokens hash (owner -> token), KEYS[4] waiters zset (waiter id -> deadline ms),
-- KEYS[5] fence: last token minted for this semaphore
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] 'n' new | 'r' re-entry, ARGV[4] waiter id or '',
-- ARGV[5] longest backstop before a waiter re-checks (ms), ARGV[6] fence key TTL (ms),
-- ARGV[7] declared permit count, stored if none is
-- Returns {1, token, 1, permits, taken} granted | {0, retry_ms, permits, taken} no permit free |
-- {-1} re-entry (permits have none). permits is the count in force (the stored one, which the client
-- compares with the count it declared), taken the permits held after this attempt.
redis.replicate_commands()
if ARGV[3] == 'r' then
  return {-1}
end
local now = sem_now()
local lease = tonumber(ARGV[2])
sem_purge(KEYS[2], KEYS[3], now)

local permits = tonumber(redis.call('GET', KEYS[1]) or '')
if not permits then
  permits = tonumber(ARGV[7])
  redis.call('SET', KEYS[1], ARGV[7])
end

local function granted(token)
  redis.call('ZADD', KEYS[2], sem_ms(now + lease), ARGV[1])
  redis.call('HSET', KEYS[3], ARGV[1], token)
  sem_keep(KEYS[2], lease)
  sem_keep(KEYS[3], lease)
  if ARGV[4] ~= '' then
    redis.call('ZREM', KEYS[4], ARGV[4])
  end
  return {1, token, 1, permits, sem_taken(KEYS[2], now)}
end

-- This owner's leftover from an earlier attempt of the same acquisition (its give-back did not
-- arrive): the same permit again, same token, lease restarted.
local mine = redis.call('ZSCORE', KEYS[2], ARGV[1])
if mine and tonumber(mine) > now then
  local token = redis.call('HGET', KEYS[3], ARGV[1])
  if token then
    return granted(token)
  end
end

local taken = sem_taken(KEYS[2], now)
if taken < permits then
  -- Same rule as the exclusive lock: max(last + 1, server time in µs), so tokens keep increasing
  -- after the counter is lost as long as this server's clock is ahead of the one that minted it.
  local t = redis.call('TIME')
  local micros = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local last = tonumber(redis.call('GET', KEYS[5]) or '0')
  local token = string.format('%.0f', math.max(micros, last + 1))
  redis.call('SET', KEYS[5], token, 'PX', ARGV[6])
  return granted(token)
end

-- No permit free. A permit comes back when taken - permits + 1 leases have run out (more than one
-- after an operator lowered the count): re-check when that many have, or after ARGV[5].
local retry = tonumber(ARGV[5])
local nth = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. sem_ms(now), '+inf', 'WITHSCORES', 'LIMIT',
  taken - permits, 1)
if nth[2] then
  retry = math.max(1, math.min(retry, tonumber(nth[2]) - now))
end
if ARGV[4] ~= '' then
  -- registered in the same atomic step as the refusal: a release after this point wakes us
  redis.call('ZADD', KEYS[4], sem_ms(now + retry + 2000), ARGV[4])
  sem_keep(KEYS[4], retry + 4000)
end
return {0, retry, permits, taken}
