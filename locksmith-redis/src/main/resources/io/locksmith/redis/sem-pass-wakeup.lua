-- KEYS[1] permit count, KEYS[2] holders zset, KEYS[3] tokens hash, KEYS[4] waiters zset
-- ARGV[1] channel prefix, ARGV[2] wake-up tag and name
-- A woken waiter had gone: if a permit is still free, wake the next waiter.
redis.replicate_commands()
local now = sem_now()
sem_purge(KEYS[2], KEYS[3], now)
sem_wake(KEYS[1], KEYS[2], KEYS[4], now, 1, ARGV[1], ARGV[2])
return 1
