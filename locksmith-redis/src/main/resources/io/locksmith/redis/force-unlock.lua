-- KEYS[1] lock (lock-value.lua), KEYS[2] waiters; ARGV[1] channel prefix, ARGV[2] tag + lock name
-- Deletes the lock whoever holds it, tells its owner (evict-notice.lua) and wakes one waiter.
-- Returns 1 if a lock was deleted. A value of no known form is deleted too (an operator's tool).
redis.replicate_commands()
local value = redis.call('GET', KEYS[1])
if not value then
  return 0
end
redis.call('DEL', KEYS[1])
local ok, lock = pcall(lock_parse, value)
if ok and not lock.reserved then
  notify_evicted(ARGV[1], lock.owner, ARGV[2])
end
wake_next(KEYS[2], ARGV[1], ARGV[2])
return 1
