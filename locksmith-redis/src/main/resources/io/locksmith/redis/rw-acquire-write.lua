-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] 'n' new | 'r' re-entry only, ARGV[4] waiter id or '',
-- ARGV[5] longest backstop before a waiter re-checks (ms), ARGV[6] fence key TTL (ms),
-- ARGV[7] channel prefix, ARGV[8] lock name
-- Returns {1, token, holds} granted | {0, retry_ms} busy | {-1} re-entry whose hold is gone
local owner, waiter = ARGV[1], ARGV[4]
local writer = redis.call('HGET', W, 'o')
if writer == owner then
  return hold_again(W, ARGV[3], ARGV[2])
end
if ARGV[3] == 'r' then
  return {-1}
end
local now, time = now_ms()
local retry = tonumber(ARGV[5])
if writer then
  local ttl = redis.call('PTTL', W)
  if ttl >= 0 and ttl < retry then
    retry = math.max(ttl, 1)
  end
else
  expire_readers(now)
  local last = redis.call('ZRANGE', R, -1, -1, 'WITHSCORES')
  local due = last[1] and {} or due_readers(now)
  if last[1] then
    -- readers hold: the backstop is the latest read lease's end
    retry = math.max(1, math.min(retry, tonumber(last[2]) - now))
  elseif #due > 0 then
    -- readers that waited for the last write phase go first (phase-fair). Wake those no release woke
    -- (that writer's lease ran out); the backstop is the last of their entry deadlines (if they die).
    wake_readers(now, true, ARGV[7], ARGV[8])
    local latest = now + 1
    for _, r in ipairs(due) do
      latest = math.max(latest, tonumber(redis.call('ZSCORE', RQ, r) or latest))
    end
    retry = math.max(1, math.min(retry, latest - now))
  else
    -- free: token = max(last + 1, server time in µs), as the exclusive lock's (see acquire.lua)
    local micros = tonumber(time[1]) * 1000000 + tonumber(time[2])
    local token = string.format('%.0f', math.max(micros, tonumber(redis.call('GET', FENCE) or '0') + 1))
    redis.call('HSET', W, 'o', owner, 'c', 1, 't', token)
    redis.call('PEXPIRE', W, ARGV[2])
    redis.call('SET', FENCE, token, 'PX', ARGV[6])
    -- a new write phase: readers refused from now on wait for its end
    redis.call('INCR', GEN)
    keep_for(GEN, tonumber(ARGV[2]))
    if waiter ~= '' then
      redis.call('ZREM', WQ, waiter)
    end
    redis.call('DEL', WOKEN)
    return {1, token, 1}
  end
end
if waiter ~= '' then
  register(WQ, waiter, now, retry)
end
return {0, retry}
