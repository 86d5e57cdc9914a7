-- The head of acquire.lua, before any prelude: the fast path, a free lock asked for by no registered
-- waiter (mode 'n'); included only for token rule 't' (RedisScript.acquire). TIME + SET … GET of the fence
-- + SET NX of the lock (lock-value.lua's form). A grant returns the token alone (AcquireReplyOutput).
-- It defines no function and calls no redis.replicate_commands() (Redis 6.2 replicates a script's effects
-- by default; the slow path below still calls it): each closure and call costs the server on every run.
-- The fence key is KEYS[1] .. ':fence' (RedisKeys.fence, same hash tag), so the call carries one key.
-- The token is minted before the lock is known to be free; on a refusal it is simply skipped (tokens
-- must increase, not be dense). Same rule as mint-token.lua; when the clock went back (last >= now) the
-- general path below mints.
if ARGV[3] == 'n' then
  local now = redis.call('TIME')
  local token = now[1] .. string.format('%06d', now[2])
  -- redis.pcall, not pcall(redis.call, …): an error comes back as a table, without a protected call frame
  local last = redis.pcall('SET', KEYS[1] .. ':fence', token, 'PX', RETENTION, 'GET')
  if type(last) == 'table' then
    error('LOCKSMITH needs Redis 6.2 or later (SET ... GET): ' .. tostring(last.err))
  end
  if (not last or tonumber(last) < tonumber(token))
      and redis.call('SET', KEYS[1], token .. '|1|0||' .. ARGV[1], 'NX', 'PX', ARGV[2]) then
    return token -- granted, one hold: the token alone is a smaller reply to build than {1, token, 1}
  end
end
