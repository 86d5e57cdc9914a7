-- KEYS[2i-1] holders zset, KEYS[2i] tokens hash of the i-th lease; ARGV[2i-1] owner, ARGV[2i] lease ms
-- Extends each permit whose lease has not run out. Returns one 1 (extended) or 0 (gone) per lease.
redis.replicate_commands()
local now = sem_now()
local out = {}
for i = 1, #KEYS / 2 do
  local holders, tokens = KEYS[2 * i - 1], KEYS[2 * i]
  local owner, lease = ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  sem_purge(holders, tokens, now)
  local expiry = redis.call('ZSCORE', holders, owner)
  if expiry and tonumber(expiry) > now then
    redis.call('ZADD', holders, 'XX', sem_ms(now + lease), owner)
    sem_keep(holders, lease)
    sem_keep(tokens, lease)
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
