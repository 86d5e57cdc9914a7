-- The head of release.lua, before any prelude: the fast path, every hold dropped ('1') from a lock of
-- this owner with no flag (no waiter mark, so nobody to wake): GET + DEL, no function defined and no
-- redis.replicate_commands() (see acquire-fast.lua; release.lua calls it). The value must be
-- "<token>|<holds>|<run>||<owner>" exactly: its tail is "||" and the owner, and what precedes that tail
-- is three numbers.
local value = redis.call('GET', KEYS[1])
if value and ARGV[2] == '1' then
  local tail = '||' .. ARGV[1]
  if string.sub(value, -#tail) == tail and string.find(string.sub(value, 1, #value - #tail), '^%d+|%d+|%d+$') then
    redis.call('DEL', KEYS[1])
    return 0
  end
end
