-- KEYS[1] holders zset, KEYS[2] tokens hash, KEYS[3] waiters zset. Read-only.
-- Returns {} if no permit is held, else the holder whose lease ends last:
-- {owner, token, remaining ms, permits taken, live waiters}.
local now = sem_now()
local last = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', '(' .. sem_ms(now), 'WITHSCORES', 'LIMIT', 0, 1)
if not last[1] then
  return {}
end
return {last[1], redis.call('HGET', KEYS[2], last[1]) or '0', tonumber(last[2]) - now,
  sem_taken(KEYS[1], now), redis.call('ZCOUNT', KEYS[3], '(' .. sem_ms(now), '+inf')}
