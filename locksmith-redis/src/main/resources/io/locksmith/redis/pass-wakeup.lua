-- KEYS[1] lock (lock-value.lua), KEYS[2] waiters; ARGV[1] channel prefix, ARGV[2] lock name, ARGV[3] gone
-- waiter id. A woken waiter had gone: if the lock is still free, wake the next one. A reservation for the
-- gone waiter (release-handoff.lua) is dropped first.
redis.replicate_commands()
local lock = lock_read(KEYS[1])
if lock and lock.reserved and lock.owner == ARGV[3] then
  redis.call('DEL', KEYS[1])
  lock = nil
end
if lock then
  return 0
end
wake_next(KEYS[2], ARGV[1], ARGV[2])
return 1
