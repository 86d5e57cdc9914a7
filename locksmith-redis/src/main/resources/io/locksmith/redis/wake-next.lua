-- Shared prelude: wake exactly one registered waiter of a freed lock (no herd). Entries whose
-- deadline passed belong to waiters that died or gave up without saying so; they are dropped first.
-- A waiter id is "<clientId>:w<seq>"; each client listens on one channel, <prefix><clientId>.
-- Returns the woken waiter's id, or nil if nobody was woken.
local function wake_next(waiters, prefix, name)
  if redis.call('EXISTS', waiters) == 0 then
    return nil -- nobody waits: the common case costs one lookup
  end
  local t = redis.call('TIME')
  local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  redis.call('ZREMRANGEBYSCORE', waiters, '-inf', now_ms)
  local popped = redis.call('ZPOPMIN', waiters)
  if popped[1] then
    local client = string.match(popped[1], '^([^:]+):')
    if client then
      redis.call('PUBLISH', prefix .. client, popped[1] .. ' ' .. name)
      return popped[1]
    end
  end
  return nil
end
