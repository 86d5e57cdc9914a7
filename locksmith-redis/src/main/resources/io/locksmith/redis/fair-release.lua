-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] places
-- ARGV[1] owner, ARGV[2] '1' drop every hold | '0' drop one, ARGV[3] channel prefix, ARGV[4] tag + name
-- Returns holds left (0 = freed, the head of the queue woken) | -1 when the owner does not hold it
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
fair_wake_head(KEYS[2], KEYS[3], ARGV[3], ARGV[4])
return 0
