-- KEYS[1] permit count, KEYS[2] holders zset, KEYS[3] tokens hash, KEYS[4] waiters zset
-- ARGV[1] new permit count, ARGV[2] channel prefix, ARGV[3] wake-up tag and name
-- Stores the count (no TTL: it is configuration). Held permits stay. Raising it wakes one waiter per
-- new permit that is free. Returns the count stored before, or 0 if none was.
redis.replicate_commands()
local now = sem_now()
local before = tonumber(redis.call('GET', KEYS[1]) or '0')
local permits = tonumber(ARGV[1])
redis.call('SET', KEYS[1], ARGV[1])
local freed = sem_purge(KEYS[2], KEYS[3], now)
local raised = permits - before
if before == 0 then
  raised = permits
end
if raised + freed > 0 then
  sem_wake(KEYS[1], KEYS[2], KEYS[4], now, math.max(raised, 0) + freed, ARGV[2], ARGV[3])
end
return before
