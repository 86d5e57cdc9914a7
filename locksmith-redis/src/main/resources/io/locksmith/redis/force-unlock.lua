-- KEYS[1] lock hash, KEYS[2] waiters; ARGV[1] channel prefix, ARGV[2] tag + lock name
-- Deletes the lock whoever holds it, tells its owner (evict-notice.lua) and wakes one waiter.
-- Returns 1 if a lock was deleted.
redis.replicate_commands()
local owner = redis.call('HGET', KEYS[1], 'o')
if redis.call('DEL', KEYS[1]) == 0 then
  return 0
end
notify_evicted(ARGV[1], owner, ARGV[2])
wake_next(KEYS[2], ARGV[1], ARGV[2])
return 1
