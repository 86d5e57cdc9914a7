-- KEYS[1] lock (lock-value.lua), KEYS[2] waiters zset, KEYS[3] fence (last token minted for this name)
-- ARGV[1] releasing owner, ARGV[2] channel prefix, ARGV[3] tag + lock name (wake-ups),
-- ARGV[4] next owner (a waiter of the same client), ARGV[5] its lease ms, ARGV[6] its waiter id,
-- ARGV[7] fence key TTL (ms), ARGV[8] token rule ('t' | 'c', see acquire.lua), ARGV[9] cohort limit,
-- ARGV[10] reservation ms
-- Releases every hold of ARGV[1] and, in the same step, grants the lock to ARGV[4] with a fresh token
-- (a local hand-off), unless ARGV[9] hand-offs in a row already happened on this grant line and a waiter
-- of another client is registered: then it releases, wakes the first such waiter and keeps the lock free
-- for that waiter alone for ARGV[10] ms (a lock value with flag 'r' and the waiter id as owner; acquire.lua
-- grants a reserved lock only to that waiter id), so that the releasing client's threads, which ask again at
-- once, cannot take it back before the woken waiter's request arrives. A reservation nobody takes
-- expires with its key. Registered waiters of the releasing client itself (threads that asked before it
-- held the lock) do not end the run: they wait in its local queue too, and a hand-off serves them.
-- Only the first OTHERS_SCANNED registrations are looked at: a longer run of the client's own ones
-- shrinks with every hand-off, which removes the registration of the waiter it serves.
-- The lock value's run field counts the hand-offs in a row; a grant by acquire.lua starts at 0. The waiter
-- mark ('w') goes with the lock to the next owner: the waiters it stands for still wait.
-- Returns {1, token} handed over | {0} released plainly | {-1} ARGV[1] does not hold the lock
redis.replicate_commands()
local lock = lock_read(KEYS[1])
if not lock or lock.reserved or lock.owner ~= ARGV[1] then
  return {-1}
end
if lock.run >= tonumber(ARGV[9]) and redis.call('EXISTS', KEYS[2]) == 1 then
  local OTHERS_SCANNED = 16
  local mine = string.match(ARGV[6], '^([^:]+):')
  local t = redis.call('TIME')
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  for _, waiter in ipairs(redis.call('ZRANGE', KEYS[2], 0, OTHERS_SCANNED - 1)) do
    local client = string.match(waiter, '^([^:]+):')
    if client and client ~= mine then
      redis.call('ZREM', KEYS[2], waiter)
      redis.call('PUBLISH', ARGV[2] .. client, waiter .. ' ' .. ARGV[3])
      -- marked: more waiters may remain, and the reserved waiter's grant keeps the mark
      redis.call('SET', KEYS[1], lock_value('0', 0, 0, 'rw', waiter), 'PX', ARGV[10])
      return {0}
    end
  end
end
-- the same token rule as a grant by acquire.lua (mint-token.lua): above the last token minted for the name
local token = mint_token(KEYS[3], ARGV[8], ARGV[7])
redis.call('SET', KEYS[1], lock_value(token, 1, lock.run + 1, lock.marked and 'w' or '', ARGV[4]), 'PX', ARGV[5])
redis.call('ZREM', KEYS[2], ARGV[6])
return {1, token}
