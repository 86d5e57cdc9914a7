-- KEYS[2i-1] readers zset, KEYS[2i] reader holds hash of request i (all in one Cluster slot);
-- ARGV[2i-1] owner, ARGV[2i] lease ms. Extends each read lease that has not ended.
-- Returns one 1 (extended) or 0 (not held any more) per request.
redis.replicate_commands()
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for i = 1, #ARGV / 2 do
  local r, rh, owner, lease = KEYS[2 * i - 1], KEYS[2 * i], ARGV[2 * i - 1], tonumber(ARGV[2 * i])
  local score = redis.call('ZSCORE', r, owner)
  if score and tonumber(score) > now then
    redis.call('ZADD', r, now + lease, owner)
    for _, key in ipairs({r, rh}) do
      if redis.call('PTTL', key) < lease then
        redis.call('PEXPIRE', key, lease)
      end
    end
    out[i] = 1
  else
    out[i] = 0
  end
end
return out
