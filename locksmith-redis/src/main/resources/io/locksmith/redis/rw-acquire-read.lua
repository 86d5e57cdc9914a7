-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] 'n' new | 'r' re-entry only, ARGV[4] waiter id or '',
-- ARGV[5] longest backstop before a waiter re-checks (ms), ARGV[6] channel prefix, ARGV[7] lock name
-- Returns {1, token, holds} granted | {0, retry_ms} busy | {-1} re-entry whose hold is gone
local owner, lease, waiter = ARGV[1], tonumber(ARGV[2]), ARGV[4]
local now = now_ms()
expire_readers(now)
local holds = redis.call('HGET', RH, 'c:' .. owner)
if holds then
  -- 'r': re-entry, granted even while writers wait (a holder must not wait for a writer that waits
  -- for it). 'n': a leftover of an earlier attempt of the same acquisition: one hold again.
  if ARGV[3] == 'r' then
    holds = redis.call('HINCRBY', RH, 'c:' .. owner, 1)
  else
    redis.call('HSET', RH, 'c:' .. owner, 1)
    holds = 1
  end
  set_reader(owner, now, lease)
  return {1, redis.call('HGET', RH, 't:' .. owner), holds}
end
if ARGV[3] == 'r' then
  return {-1}
end
local retry = tonumber(ARGV[5])
local writer = redis.call('HGET', W, 'o')
local token
local writers_waiting = false
if writer == owner then
  -- downgrade: the writer takes a read hold, whoever waits; it carries the write grant's token
  token = redis.call('HGET', W, 't')
elseif writer then
  local ttl = redis.call('PTTL', W)
  if ttl >= 0 and ttl < retry then
    retry = math.max(ttl, 1)
  end
else
  writers_waiting = writers_wait(now)
  local ticket = reader_ticket(waiter, now)
  if not writers_waiting or (ticket and ticket <= generation()) then
    -- nobody waits to write, or this reader waited for a write phase that is over: it is due
    token = redis.call('GET', FENCE) or '0'
  else
    -- it came while writers wait: it queues behind the next one (writers do not starve). The
    -- backstop is the last waiting writer's deadline (if that writer dies silently).
    local last = redis.call('ZRANGE', WQ, -1, -1, 'WITHSCORES')
    retry = math.max(1, math.min(retry, tonumber(last[2]) - now))
  end
end
if token then
  redis.call('HSET', RH, 'c:' .. owner, 1, 't:' .. owner, token)
  set_reader(owner, now, lease)
  if waiter ~= '' then
    drop_reader(waiter)
  end
  if not writer then
    -- readers may enter: let in the others that may, which no release woke (their write phase ended
    -- with a lease running out, or the writer they queued behind is gone); none are woken twice
    wake_readers(now, writers_waiting, ARGV[6], ARGV[7])
  end
  return {1, token, 1}
end
if waiter ~= '' then
  register_reader(waiter, now, retry, writer ~= false)
end
return {0, retry}
