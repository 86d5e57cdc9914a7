-- ARGV[1] owner, ARGV[2] '1' drop every hold | '0' drop one, ARGV[3] channel prefix, ARGV[4] lock name
-- Returns holds left (0 = released) | -1 when the owner does not hold the write lock
if redis.call('HGET', W, 'o') ~= ARGV[1] then
  return -1
end
if ARGV[2] == '0' then
  local holds = redis.call('HINCRBY', W, 'c', -1)
  if holds > 0 then
    return holds
  end
end
redis.call('DEL', W)
wake_next(now_ms(), ARGV[3], ARGV[4])
return 0
