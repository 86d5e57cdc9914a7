-- Read-write lock prelude, prepended to each rw-*.lua script. Every script takes the same keys:
-- KEYS[1] writer hash {o = owner, c = hold count, t = fencing token}, TTL = write lease
-- KEYS[2] readers zset: member = owner, score = end of its read lease (server ms)
-- KEYS[3] reader holds hash: 'c:'..owner = hold count, 't:'..owner = token the read was granted with
-- KEYS[4] waiting writers zset: member = waiter id, score = deadline (server ms); a live entry keeps
--         new readers out (writer preference)
-- KEYS[5] waiting readers zset: member = waiter id, score = deadline (server ms)
-- KEYS[6] fence: last write token minted for this name
-- KEYS[7] the waiting writer last woken while the lock was free (short TTL)
-- Wake-up message: '<waiterId> <tag><name>' on '<prefix><clientId>'; tag 'w' for a waiting writer,
-- 'r' for a waiting reader, so that a wake-up whose waiter is gone is passed on by the right side.
-- A reader's hold counts only while its score is in the future: an expired reader is dropped by the
-- next script that looks (expire_readers), so a crashed reader blocks writers for its lease at most.
redis.replicate_commands()
local W, R, RH, WQ, RQ, FENCE, WOKEN = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000), t
end

-- Drops readers whose lease ended, with their hold counts and tokens.
local function expire_readers(now)
  local gone = redis.call('ZRANGEBYSCORE', R, '-inf', now)
  if #gone > 0 then
    for _, o in ipairs(gone) do
      redis.call('HDEL', RH, 'c:' .. o, 't:' .. o)
    end
    redis.call('ZREMRANGEBYSCORE', R, '-inf', now)
  end
end

-- Sets a key's TTL to at least ms (never shortens it: other entries may need longer).
local function keep_for(key, ms)
  if redis.call('PTTL', key) < ms then
    redis.call('PEXPIRE', key, ms)
  end
end

-- Records (or refreshes) a reader's lease end; both reader keys live as long as the longest lease.
local function set_reader(owner, now, lease)
  redis.call('ZADD', R, now + lease, owner)
  keep_for(R, lease)
  keep_for(RH, lease)
end

-- Registers a waiter; its entry lasts until it should have re-checked, plus a margin.
local function register(queue, waiter, now, retry)
  redis.call('ZADD', queue, now + retry + 2000, waiter)
  keep_for(queue, retry + 4000)
end

-- Whether a live writer waits (entries of writers that died or gave up silently are dropped first).
local function writers_wait(now)
  if redis.call('EXISTS', WQ) == 0 then
    return false
  end
  redis.call('ZREMRANGEBYSCORE', WQ, '-inf', now)
  return redis.call('ZCARD', WQ) > 0
end

local function publish(prefix, waiter, tag, name)
  local client = string.match(waiter, '^([^:]+):')
  if client then
    redis.call('PUBLISH', prefix .. client, waiter .. ' ' .. tag .. name)
  end
end

-- Wakes up to n waiting readers, earliest deadline first.
local function wake_readers(n, now, prefix, name)
  if redis.call('EXISTS', RQ) == 0 then
    return
  end
  redis.call('ZREMRANGEBYSCORE', RQ, '-inf', now)
  local popped = redis.call('ZPOPMIN', RQ, n)
  for i = 1, #popped, 2 do
    publish(prefix, popped[i], 'r', name)
  end
end

-- After the lock changed: wake whoever may enter now. A writer holds: nobody (its release wakes).
-- A writer waits: the first waiting writer once no reader holds (it stays registered, so readers keep
-- out until it arrives; it is remembered in WOKEN so that a pass from a gone writer drops it).
-- Nobody waits to write: one reader, whose grant wakes more (see rw-acquire-read.lua).
local function wake_next(now, prefix, name)
  if redis.call('EXISTS', W) == 1 then
    return
  end
  if writers_wait(now) then
    expire_readers(now)
    if redis.call('EXISTS', R) == 0 then
      local head = redis.call('ZRANGE', WQ, 0, 0, 'WITHSCORES')
      redis.call('SET', WOKEN, head[1], 'PX', math.max(1, tonumber(head[2]) - now))
      publish(prefix, head[1], 'w', name)
    end
    return
  end
  wake_readers(1, now, prefix, name)
end
