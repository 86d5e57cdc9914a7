-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] places; ARGV[1] waiter id, ARGV[2] channel prefix,
-- ARGV[3] tag + name
-- A waiter gives up: its place goes. If it was first in line and the lock is free, it may have been
-- woken already, so the new head is woken. Returns 1 if the waiter was queued.
redis.replicate_commands()
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  redis.call('ZREM', KEYS[3], ARGV[1])
  return 0
end
local head = fair_head(KEYS[2], KEYS[3], fair_now(redis.call('TIME')))
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
if head == ARGV[1] and redis.call('EXISTS', KEYS[1]) == 0 then
  fair_wake_head(KEYS[2], KEYS[3], ARGV[2], ARGV[3])
end
return 1
