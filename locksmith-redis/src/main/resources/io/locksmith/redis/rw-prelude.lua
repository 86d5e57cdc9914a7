-- Read-write lock prelude, prepended to each rw-*.lua script. Every script takes the same keys:
-- KEYS[1] writer hash {o = owner, c = hold count, t = fencing token}, TTL = write lease
-- KEYS[2] readers zset: member = owner, score = end of its read lease (server ms)
-- KEYS[3] reader holds hash: 'c:'..owner = hold count, 't:'..owner = token the read was granted with
-- KEYS[4] waiting writers zset: member = waiter id, score = deadline (server ms); a live entry keeps
--         new readers out (writer preference)
-- KEYS[5] waiting readers zset: member = waiter id, score = deadline (server ms)
-- KEYS[6] fence: last write token minted for this name
-- KEYS[7] the waiting writer last woken while the lock was free (short TTL)
-- KEYS[8] waiting readers' tickets zset: member = waiter id, score = the write generation whose end
--         the reader waits for, or 0 once it was let in (woken) and has not entered yet
-- KEYS[9] write generation: the number of fresh write grants (a counter; only its order matters)
-- Wake-up message: '<waiterId> <tag><name>' on '<prefix><clientId>'; tag 'w' for a waiting writer,
-- 'r' for a waiting reader, so that a wake-up whose waiter is gone is passed on by the right side.
-- A reader's hold counts only while its score is in the future: an expired reader is dropped by the
-- next script that looks (expire_readers), so a crashed reader blocks writers for its lease at most.
--
-- Admission is phase-fair. A waiting reader holds a ticket: the generation of the writer that held
-- when it was refused, or the next generation when it was refused because writers waited (it came
-- after them, so it queues behind the next one). Once that write phase is over (no writer holds and
-- ticket <= generation) the reader is "due": it enters even while writers wait, and no writer is
-- granted while a due reader is registered. So every reader waiting when a writer's hold ends enters,
-- as one batch, before the next writer; readers arriving while a writer waits queue behind it, so
-- neither side starves. The end of a write phase needs no script: a writer whose lease ran out
-- has ended its phase just the same. Due entries expire with the reader's entry deadline, so a
-- reader that died while due keeps writers out until then at most.
redis.replicate_commands()
local W, R, RH, WQ, RQ, FENCE, WOKEN, RT, GEN = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7],
  KEYS[8], KEYS[9]

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

-- The write generation (0 when none is remembered: nobody waits for one then).
local function generation()
  return tonumber(redis.call('GET', GEN) or '0')
end

-- Drops waiting readers whose entry ended (died, or gave up silently), with their tickets.
local function expire_waiting_readers(now)
  local gone = redis.call('ZRANGEBYSCORE', RQ, '-inf', now)
  if #gone > 0 then
    for _, w in ipairs(gone) do
      redis.call('ZREM', RT, w)
    end
    redis.call('ZREMRANGEBYSCORE', RQ, '-inf', now)
  end
end

-- Registers a waiting reader (see register) with its ticket; a reader registered again (at its
-- backstop) keeps its first ticket, hence its place. The generation lives at least as long as the
-- tickets that refer to it.
local function register_reader(waiter, now, retry, writer_holds)
  local g = generation()
  if g == 0 then
    g = 1 -- a writer holds whose count expired (or none ever did): start counting here
    redis.call('SET', GEN, g)
  end
  redis.call('ZADD', RT, 'NX', writer_holds and g or g + 1, waiter)
  register(RQ, waiter, now, retry)
  keep_for(RT, retry + 4000)
  keep_for(GEN, retry + 4000)
end

-- A live waiting reader's ticket, or nil.
local function reader_ticket(waiter, now)
  if waiter == '' or redis.call('EXISTS', RT) == 0 then
    return nil
  end
  expire_waiting_readers(now)
  local ticket = redis.call('ZSCORE', RT, waiter)
  return ticket and tonumber(ticket)
end

-- Forgets a waiting reader (it entered, gave up or is gone); returns its ticket, or nil.
local function drop_reader(waiter)
  local ticket = redis.call('ZSCORE', RT, waiter)
  redis.call('ZREM', RQ, waiter)
  redis.call('ZREM', RT, waiter)
  return ticket and tonumber(ticket)
end

-- The due waiting readers (only call while no writer holds): woken ones (ticket 0) and those whose
-- write phase has ended. Returns their ids.
local function due_readers(now)
  if redis.call('EXISTS', RT) == 0 then
    return {}
  end
  expire_waiting_readers(now)
  return redis.call('ZRANGEBYSCORE', RT, '-inf', generation())
end

-- Whether a due waiting reader is registered (only call while no writer holds).
local function any_due_reader(now)
  if redis.call('EXISTS', RT) == 0 then
    return false
  end
  expire_waiting_readers(now)
  return redis.call('ZCOUNT', RT, '-inf', generation()) > 0
end

-- No writer holds: wakes the waiting readers that may enter and were not woken yet, one PUBLISH each.
-- While writers wait those are the readers whose write phase has ended; else every waiting reader.
-- A woken reader stays registered with ticket 0 until it enters (or gives up, or its entry ends), so
-- that no writer slips in before it and it is not woken twice.
local function wake_readers(now, writers_waiting, prefix, name)
  if redis.call('EXISTS', RT) == 0 then
    return
  end
  expire_waiting_readers(now)
  local due = redis.call('ZRANGEBYSCORE', RT, 1, writers_waiting and generation() or '+inf')
  for _, waiter in ipairs(due) do
    redis.call('ZADD', RT, 'XX', 0, waiter)
    publish(prefix, waiter, 'r', name)
  end
end

-- After the lock changed: wake whoever may enter now. A writer holds: nobody (its release wakes).
-- Otherwise the readers that may enter (see wake_readers), and while they have not all entered and
-- left, no writer. Then, once no reader holds either, the first waiting writer (it stays registered,
-- so readers keep out until it arrives; it is remembered in WOKEN so that a pass from a gone writer
-- drops it).
local function wake_next(now, prefix, name)
  if redis.call('EXISTS', W) == 1 then
    return
  end
  local writers_waiting = writers_wait(now)
  wake_readers(now, writers_waiting, prefix, name)
  if not writers_waiting or any_due_reader(now) then
    return
  end
  expire_readers(now)
  if redis.call('EXISTS', R) == 0 then
    local head = redis.call('ZRANGE', WQ, 0, 0, 'WITHSCORES')
    redis.call('SET', WOKEN, head[1], 'PX', math.max(1, tonumber(head[2]) - now))
    publish(prefix, head[1], 'w', name)
  end
end
