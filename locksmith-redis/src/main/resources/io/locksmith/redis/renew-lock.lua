-- KEYS[i] exclusive locks (lock-value.lua); ARGV[2i-1] owner, ARGV[2i] lease ms. Extends each lease still
-- owned. Returns one 1 (extended) or 0 (not owned any more) per key.
local out = {}
for i = 1, #KEYS do
  local lock = lock_read(KEYS[i])
  if lock and not lock.reserved and lock.owner == ARGV[2 * i - 1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
