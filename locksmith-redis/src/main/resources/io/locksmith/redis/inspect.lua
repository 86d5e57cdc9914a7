-- KEYS[1] lock (lock-value.lua), KEYS[2] waiters. Returns {} if free (or reserved for a woken waiter),
-- else {owner, holds, token, pttl, waiters}.
local lock = lock_read(KEYS[1])
if not lock or lock.reserved then
  return {}
end
return {lock.owner, tostring(lock.holds), lock.token, redis.call('PTTL', KEYS[1]), redis.call('ZCARD', KEYS[2])}
