-- KEYS[1] lock hash, KEYS[3] places. Read-only.
-- Returns {} if free, else {owner, holds, token, pttl, queued waiters whose place has not expired}.
local h = redis.call('HMGET', KEYS[1], 'o', 'c', 't')
if not h[1] then
  return {}
end
local t = redis.call('TIME')
local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {h[1], h[2], h[3], redis.call('PTTL', KEYS[1]), redis.call('ZCOUNT', KEYS[3], '(' .. now_ms, '+inf')}
