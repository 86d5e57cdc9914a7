-- ARGV[1] owner, ARGV[2] '1' drop every hold | '0' drop one, ARGV[3] channel prefix, ARGV[4] lock name
-- Returns holds left (0 = released) | -1 when the owner holds no read lease (any more)
local owner = ARGV[1]
local now = now_ms()
expire_readers(now)
if not redis.call('HGET', RH, 'c:' .. owner) then
  return -1
end
if ARGV[2] == '0' then
  local holds = redis.call('HINCRBY', RH, 'c:' .. owner, -1)
  if holds > 0 then
    return holds
  end
end
redis.call('ZREM', R, owner)
redis.call('HDEL', RH, 'c:' .. owner, 't:' .. owner)
wake_next(now, ARGV[3], ARGV[4])
return 0
