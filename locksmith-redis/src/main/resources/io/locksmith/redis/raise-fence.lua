-- KEYS[1] lock (lock-value.lua), KEYS[2] fence; ARGV[1] owner or '', ARGV[2] token, ARGV[3] fence key TTL
-- (ms). Redlock's second step: raise this node's counter to the token the quorum agreed on, and record that
-- token on the owner's hold here. Returns 1 once the counter is at least the token.
local token = tonumber(ARGV[2])
if tonumber(redis.call('GET', KEYS[2]) or '0') < token then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
if ARGV[1] ~= '' then
  local lock = lock_read(KEYS[1])
  if lock and not lock.reserved and lock.owner == ARGV[1] then
    redis.call('SET', KEYS[1], lock_value(ARGV[2], lock.holds, lock.run, lock.flags, lock.owner), 'KEEPTTL')
  end
end
return 1
