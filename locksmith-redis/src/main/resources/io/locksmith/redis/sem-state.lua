-- KEYS[1] permit count, KEYS[2] holders zset, KEYS[3] tokens hash, KEYS[4] waiters zset. Read-only:
-- declares and stores nothing, for operators.
-- Returns {stored count or 0 if none is stored, live waiters, then owner, token, remaining ms for
-- every unexpired permit}.
local now = sem_now()
local out = {tonumber(redis.call('GET', KEYS[1]) or '0') or 0,
  redis.call('ZCOUNT', KEYS[4], '(' .. sem_ms(now), '+inf')}
local held = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. sem_ms(now), '+inf', 'WITHSCORES')
for i = 1, #held, 2 do
  out[#out + 1] = held[i]
  out[#out + 1] = redis.call('HGET', KEYS[3], held[i]) or '0'
  out[#out + 1] = tonumber(held[i + 1]) - now
end
return out
