-- KEYS[1] lock hash, KEYS[2] waiters; ARGV[1] channel prefix, ARGV[2] lock name
-- A woken waiter had gone: if the lock is still free, wake the next one.
redis.replicate_commands()
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
wake_next(KEYS[2], ARGV[1], ARGV[2])
return 1
