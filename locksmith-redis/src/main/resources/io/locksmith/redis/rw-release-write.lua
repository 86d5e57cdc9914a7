-- ARGV[1] owner, ARGV[2] '1' drop every hold | '0' drop one, ARGV[3] channel prefix, ARGV[4] lock name
-- Returns holds left (0 = released) | -1 when the owner does not hold the write lock
local left = drop_hold(W, ARGV[1], ARGV[2])
if left == 0 then
  wake_next(now_ms(), ARGV[3], ARGV[4])
end
return left
