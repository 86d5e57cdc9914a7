-- The head of acquire.lua, before any prelude: the fast path, a free lock asked for under rule 't' by no
-- registered waiter (mode 'n'). TIME + SET … GET of the fence + SET NX of the lock (lock-value.lua's form).
-- It defines no function: the preludes' closures, created on every run of a script that reaches them,
-- cost the server more than a command each, so a grant here returns before they exist. The token is
-- minted before the lock is known to be free; on a refusal it is simply skipped (tokens must increase,
-- not be dense). Rule 'c' must not advance the counter without a grant (Redlock keeps the nodes equal).
-- Same rule as mint-token.lua; when the clock went back (last >= now) the general path below mints.
redis.replicate_commands()
if ARGV[3] == 'n' and ARGV[7] == 't' then
  local now = redis.call('TIME')
  local token = now[1] .. string.format('%06d', tonumber(now[2]))
  local ok, last = pcall(redis.call, 'SET', KEYS[3], token, 'PX', ARGV[6], 'GET')
  if not ok then
    error('LOCKSMITH needs Redis 6.2 or later (SET ... GET): ' .. tostring(last and last.err or last))
  end
  if (not last or tonumber(last) < tonumber(token))
      and redis.call('SET', KEYS[1], token .. '|1|0||' .. ARGV[1], 'NX', 'PX', ARGV[2]) then
    return {1, token, 1}
  end
end
