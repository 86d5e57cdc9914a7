-- KEYS[1] lock hash, KEYS[2] waiters; ARGV[1] channel prefix, ARGV[2] lock name
-- Deletes the lock whoever holds it and wakes one waiter. Returns 1 if a lock was deleted.
redis.replicate_commands()
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
wake_next(KEYS[2], ARGV[1], ARGV[2])
return 1
