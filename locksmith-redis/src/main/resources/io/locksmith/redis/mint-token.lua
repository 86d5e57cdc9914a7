-- Shared prelude of acquire.lua and release-handoff.lua: one token rule in one place.
-- The fencing token of a fresh grant, above the last one minted for the name, and recorded as the last.
-- Rule 't': max(last + 1, server time in µs) with one SET … GET (Redis 6.2+): the counter makes tokens
-- increase while the data survives, the time floor after it is lost (restart without persistence, a
-- failover to a replica that missed it), as long as this server's clock is ahead of the one that minted
-- the last token. A clock that went back costs a second SET (rare).
-- Rule 'c' (Redlock): last + 1, so that the nodes' counters stay equal and a quorum usually agrees on one
-- token without a second round; server time only for a node that has no counter.
-- Formatted with %.0f where arithmetic was done: tostring() would print 1.7e+15.
local function mint_token(fence_key, rule, ttl_ms)
  local token
  if rule == 'c' then
    local last = tonumber(redis.call('GET', fence_key) or '0')
    if last > 0 then
      token = string.format('%.0f', last + 1)
    else
      local now = redis.call('TIME')
      token = now[1] .. string.format('%06d', tonumber(now[2]))
    end
    redis.call('SET', fence_key, token, 'PX', ttl_ms)
    return token
  end
  local now = redis.call('TIME')
  token = now[1] .. string.format('%06d', tonumber(now[2]))
  local ok, last = pcall(redis.call, 'SET', fence_key, token, 'PX', ttl_ms, 'GET')
  if not ok then
    error('LOCKSMITH needs Redis 6.2 or later (SET ... GET): ' .. tostring(last and last.err or last))
  end
  if last and tonumber(last) >= tonumber(token) then
    token = string.format('%.0f', tonumber(last) + 1)
    redis.call('SET', fence_key, token, 'PX', ttl_ms)
  end
  return token
end
