-- KEYS[1] permit count, KEYS[2] holders zset, KEYS[3] tokens hash, KEYS[4] waiters zset
-- ARGV[1] owner, ARGV[2] channel prefix, ARGV[3] wake-up tag and name
-- Returns 0 (permit returned) | -1 when the owner held no permit (never granted, released, expired)
redis.replicate_commands()
local now = sem_now()
local freed = sem_purge(KEYS[2], KEYS[3], now)
local mine = redis.call('ZSCORE', KEYS[2], ARGV[1])
local held = mine and tonumber(mine) > now
if mine then
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
end
if held then
  freed = freed + 1
end
-- one waiter per permit this call freed (normally exactly one), never more than are free
sem_wake(KEYS[1], KEYS[2], KEYS[4], now, freed, ARGV[2], ARGV[3])
if held then
  return 0
end
return -1
