-- KEYS[1] permit count, KEYS[2] holders zset, KEYS[3] tokens hash, KEYS[4] waiters zset
-- ARGV[1] channel prefix, ARGV[2] wake-up tag and name
-- Drops every permit (the permit count stays) and wakes one waiter per free permit.
-- Returns how many unexpired permits were dropped.
redis.replicate_commands()
local now = sem_now()
local dropped = sem_taken(KEYS[2], now)
redis.call('DEL', KEYS[2], KEYS[3])
-- every stored permit is free now (sem_wake caps at that); with none stored, one per dropped permit
local n = tonumber(redis.call('GET', KEYS[1]) or '') or math.max(dropped, 1)
sem_wake(KEYS[1], KEYS[2], KEYS[4], now, n, ARGV[1], ARGV[2])
return dropped
