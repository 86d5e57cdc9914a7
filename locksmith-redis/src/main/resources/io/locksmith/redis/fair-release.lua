-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] places
-- ARGV[1] owner, ARGV[2] '1' drop every hold | '0' drop one, ARGV[3] channel prefix, ARGV[4] tag + name
-- Returns holds left (0 = freed, the head of the queue woken) | -1 when the owner does not hold it
redis.replicate_commands()
local left = drop_hold(KEYS[1], ARGV[1], ARGV[2])
if left == 0 then
  fair_wake_head(KEYS[2], KEYS[3], ARGV[3], ARGV[4])
end
return left
