-- KEYS[1] lock hash, KEYS[2] waiters zset
-- ARGV[1] owner, ARGV[2] '1' drop every hold | '0' drop one, ARGV[3] channel prefix, ARGV[4] lock name
-- Returns holds left (0 = freed, one waiter woken) | -1 when the owner does not hold the lock
redis.replicate_commands()
local left = drop_hold(KEYS[1], ARGV[1], ARGV[2])
if left == 0 then
  wake_next(KEYS[2], ARGV[3], ARGV[4])
end
return left
