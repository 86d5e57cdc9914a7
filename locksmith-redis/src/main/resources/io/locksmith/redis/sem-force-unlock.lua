-- KEYS[1] permit count, KEYS[2] holders zset, KEYS[3] tokens hash, KEYS[4] waiters zset
-- ARGV[1] channel prefix, ARGV[2] wake-up tag and name
-- Drops every permit (the permit count stays), tells each holder of an unexpired permit
-- (evict-notice.lua) and wakes one waiter per free permit. Returns how many unexpired permits were
-- dropped.
redis.replicate_commands()
local now = sem_now()
local holders = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. sem_ms(now), '+inf')
redis.call('DEL', KEYS[2], KEYS[3])
for _, owner in ipairs(holders) do
  notify_evicted(ARGV[1], owner, ARGV[2])
end
-- every stored permit is free now (sem_wake caps at that); with none stored, one per dropped permit
local n = tonumber(redis.call('GET', KEYS[1]) or '') or math.max(#holders, 1)
sem_wake(KEYS[1], KEYS[2], KEYS[4], now, n, ARGV[1], ARGV[2])
return #holders
