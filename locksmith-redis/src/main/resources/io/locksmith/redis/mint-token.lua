-- Shared prelude: the fencing token of a fresh exclusive grant (acquire.lua, release-handoff.lua), one rule
-- in one place. Token = max(last + 1, server time in microseconds). The counter makes tokens strictly
-- increase while the data survives; the time floor keeps them increasing after the counter is lost
-- (restart without persistence, failover to a replica that missed it) as long as this server's clock is
-- ahead of the one that minted the last token. Formatted with %.0f: tostring() would print 1.7e+15.
-- Rule 'c' (Redlock) keeps the nodes' counters equal, so a quorum usually agrees on one token without a
-- second round; the time seed covers a node that lost its counter. TIME only where it is used: every call
-- costs each of a Redlock's nodes.
local function mint_token(fence_key, rule)
  local last = tonumber(redis.call('GET', fence_key) or '0')
  if rule == 'c' and last > 0 then
    return string.format('%.0f', last + 1)
  end
  local now = redis.call('TIME')
  return string.format('%.0f', math.max(tonumber(now[1]) * 1000000 + tonumber(now[2]), last + 1))
end
