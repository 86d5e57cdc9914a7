-- KEYS[i] lock hashes (a fair lock, a read-write lock's writer); ARGV[2i-1] owner, ARGV[2i] lease ms. Extends each lease still owned.
-- Returns one 1 (extended) or 0 (not owned any more) per key.
local out = {}
for i = 1, #KEYS do
  if redis.call('HGET', KEYS[i], 'o') == ARGV[2 * i - 1] then
    redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
