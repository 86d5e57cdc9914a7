-- KEYS[1] lock (lock-value.lua); its waiters zset is KEYS[1] .. ':waiters' (RedisKeys, same hash tag)
-- ARGV[1] owner, ARGV[2] '1' drop every hold | '0' drop one, ARGV[3] channel prefix, ARGV[4] lock name
-- Returns holds left (0 = freed, one waiter woken if the lock is marked) | -1 when the owner does not hold
-- the lock. After release-fast.lua (GET + DEL for an unmarked lock whose holds all go), whose GET this
-- reuses, and the preludes.
redis.replicate_commands()
local lock = value and lock_parse(value)
if not lock or lock.reserved or lock.owner ~= ARGV[1] then
  return -1
end
if ARGV[2] == '0' and lock.holds > 1 then
  redis.call('SET', KEYS[1], lock_value(lock.token, lock.holds - 1, lock.run, lock.flags, lock.owner), 'KEEPTTL')
  return lock.holds - 1
end
redis.call('DEL', KEYS[1])
if lock.marked then
  wake_next(KEYS[1] .. ':waiters', ARGV[3], ARGV[4])
end
return 0
