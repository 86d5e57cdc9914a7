-- KEYS[1] permit count, KEYS[2] holders zset, KEYS[3] waiters zset; ARGV[1] declared permit count
-- Read-only. Returns {permits in force (stored, else declared), taken, live waiters}.
local now = sem_now()
local permits = tonumber(redis.call('GET', KEYS[1]) or '') or tonumber(ARGV[1])
return {permits, sem_taken(KEYS[2], now), redis.call('ZCOUNT', KEYS[3], '(' .. sem_ms(now), '+inf')}
