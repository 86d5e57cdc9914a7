-- KEYS[1] lock hash, KEYS[2] waiters zset
-- ARGV[1] owner, ARGV[2] '1' drop every hold | '0' drop one, ARGV[3] channel prefix, ARGV[4] lock name
-- Returns holds left (0 = freed, one waiter woken) | -1 when the owner does not hold the lock
redis.replicate_commands()
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then
  return -1
end
if ARGV[2] == '0' then
  local holds = redis.call('HINCRBY', KEYS[1], 'c', -1)
  if holds > 0 then
    return holds
  end
end
redis.call('DEL', KEYS[1])
wake_next(KEYS[2], ARGV[3], ARGV[4])
return 0
