-- ARGV[1] waiter id, ARGV[2] channel prefix, ARGV[3] lock name
-- A waiter gives up. A writer that leaves may let readers in (it kept them out), and a due reader that
-- leaves may let the next writer in (it kept writers out): then wake whoever may enter.
local ticket = drop_reader(ARGV[1])
if redis.call('ZREM', WQ, ARGV[1]) == 1 then
  if redis.call('GET', WOKEN) == ARGV[1] then
    redis.call('DEL', WOKEN)
  end
  wake_next(now_ms(), ARGV[2], ARGV[3])
elseif ticket and ticket <= generation() then
  wake_next(now_ms(), ARGV[2], ARGV[3])
end
return 1
