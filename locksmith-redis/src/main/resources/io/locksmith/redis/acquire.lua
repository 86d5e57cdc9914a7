-- KEYS[1] lock (lock-value.lua); beside it, under its hash tag (RedisKeys): KEYS[1] .. ':waiters' (zset,
-- member = waiter id, score = deadline in server ms) and KEYS[1] .. ':fence' (last token minted for this name)
-- ARGV[1] owner, ARGV[2] lease ms, ARGV[3] 'n' new | 'w' new, by a waiter registered before | 'r' re-entry
-- only, ARGV[4] waiter id or ''
-- Per client, in the header RedisScript.acquire writes: RECHECK longest backstop before a waiter re-checks
-- (ms), RETENTION fence key TTL (ms), RULE token rule 't' max(last + 1, server time) | 'c' last + 1
-- Returns {1, token, holds} granted (acquire-fast.lua: the token alone, one hold) | {0, retry_ms, last} busy | {-1} re-entry whose hold is gone
-- After acquire-fast.lua (the fast path) and the preludes: everything else.
redis.replicate_commands()
local waiters_key, fence_key = KEYS[1] .. ':waiters', KEYS[1] .. ':fence'
local lock = lock_read(KEYS[1])
if lock and not lock.reserved and lock.owner == ARGV[1] then
  -- the owner asks again: 'r' deepens its hold; 'n'/'w' finds a leftover of an earlier attempt of the
  -- same acquisition (its give-back did not arrive): one hold again, so that one release frees it.
  -- Either way the lease starts over.
  local holds = ARGV[3] == 'r' and lock.holds + 1 or 1
  redis.call('SET', KEYS[1], lock_value(lock.token, holds, lock.run, lock.flags, lock.owner), 'PX', ARGV[2])
  return {1, lock.token, holds}
end
if ARGV[3] == 'r' then
  return {-1}
end
local flags = ''
local free = not lock
if lock and lock.reserved and lock.owner == ARGV[4] then
  -- reserved for the waiter a cohort's last release woke (release-handoff.lua): that waiter only
  free = true
  flags = lock.marked and 'w' or ''
end
if free then
  local token = mint_token(fence_key, RULE, RETENTION)
  if ARGV[4] ~= '' then
    -- a waiter's grant: others may still wait (a release woke only this one), so the lock keeps the
    -- mark that has its release wake the next
    redis.call('ZREM', waiters_key, ARGV[4])
    if redis.call('EXISTS', waiters_key) == 1 then
      flags = 'w'
    end
  end
  redis.call('SET', KEYS[1], lock_value(token, 1, 0, flags, ARGV[1]), 'PX', ARGV[2])
  return {1, token, 1}
end
local retry = RECHECK
local ttl = redis.call('PTTL', KEYS[1])
if ttl >= 0 and ttl < retry then
  retry = math.max(ttl, 1)
end
if ARGV[4] ~= '' then
  -- registered in the same atomic step as the refusal: a release after this point wakes us
  local now = redis.call('TIME')
  local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
  redis.call('ZADD', waiters_key, now_ms + retry + 2000, ARGV[4])
  -- only ever extend: another waiter may have registered with a longer deadline
  if redis.call('PTTL', waiters_key) < retry + 4000 then
    redis.call('PEXPIRE', waiters_key, retry + 4000)
  end
  if not lock.marked then
    redis.call('SET', KEYS[1], lock_value(lock.token, lock.holds, lock.run, lock.flags .. 'w', lock.owner),
      'KEEPTTL')
  end
end
return {0, retry, redis.call('GET', fence_key) or '0'}
