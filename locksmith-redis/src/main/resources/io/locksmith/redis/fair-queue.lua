-- Shared prelude of the fair lock's scripts. The queue is two sorted sets over the same members
-- (waiter ids "<clientId>:w<seq>"):
--   queue:  score = arrival, server time in µs (set once: a refresh never moves a waiter back)
--   places: score = when the place expires, server time in ms (pushed forward by every attempt)
-- A waiter that died or gave up without saying so stops refreshing; its place expires and it is
-- dropped before anyone asks who is first, so it never blocks the queue longer than its timeout.

-- Drops expired places (at most 512 per call, to bound one script; fair_head drops the rest lazily).
local function fair_purge(queue, places, now_ms)
  local gone = redis.call('ZRANGEBYSCORE', places, '-inf', now_ms, 'LIMIT', 0, 512)
  for i = 1, #gone do
    redis.call('ZREM', queue, gone[i])
    redis.call('ZREM', places, gone[i])
  end
end

-- The earliest arrival whose place is still valid, or nil; expired or orphaned entries met on the
-- way are dropped.
local function fair_head(queue, places, now_ms)
  fair_purge(queue, places, now_ms)
  while true do
    local head = redis.call('ZRANGE', queue, 0, 0)[1]
    if not head then
      return nil
    end
    local expires = redis.call('ZSCORE', places, head)
    if expires and tonumber(expires) > now_ms then
      return head
    end
    redis.call('ZREM', queue, head)
    redis.call('ZREM', places, head)
  end
end

local function fair_now(t)
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Wakes the head of the queue only (it stays queued until it takes the lock): one PUBLISH to the
-- head's client channel, "<waiterId> <tag><name>". Nobody queued: one EXISTS and nothing else.
local function fair_wake_head(queue, places, prefix, tagged_name)
  if redis.call('EXISTS', queue) == 0 then
    return
  end
  local head = fair_head(queue, places, fair_now(redis.call('TIME')))
  if head then
    local client = string.match(head, '^([^:]+):')
    if client then
      redis.call('PUBLISH', prefix .. client, head .. ' ' .. tagged_name)
    end
  end
end
