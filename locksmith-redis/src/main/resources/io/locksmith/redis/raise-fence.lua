-- KEYS[1] lock hash, KEYS[2] fence; ARGV[1] owner or '', ARGV[2] token, ARGV[3] fence key TTL (ms)
-- Redlock's second step: raise this node's counter to the token the quorum agreed on, and record that
-- token on the owner's hold here. Returns 1 once the counter is at least the token.
local token = tonumber(ARGV[2])
if tonumber(redis.call('GET', KEYS[2]) or '0') < token then
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
if ARGV[1] ~= '' and redis.call('HGET', KEYS[1], 'o') == ARGV[1] then
  redis.call('HSET', KEYS[1], 't', ARGV[2])
end
return 1
