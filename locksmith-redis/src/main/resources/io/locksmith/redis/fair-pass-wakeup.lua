-- KEYS[1] lock hash, KEYS[2] queue, KEYS[3] places; ARGV[1] channel prefix, ARGV[2] tag + name
-- A woken waiter had gone: if the lock is still free, wake the head of the queue.
redis.replicate_commands()
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
fair_wake_head(KEYS[2], KEYS[3], ARGV[1], ARGV[2])
return 1
