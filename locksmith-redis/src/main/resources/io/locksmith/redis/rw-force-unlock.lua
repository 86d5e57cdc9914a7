-- ARGV[1] 'w' remove the writer | 'r' remove every reader, ARGV[2] channel prefix, ARGV[3] lock name
-- Returns 1 if a hold was removed; then wakes whoever may enter.
local now = now_ms()
if ARGV[1] == 'w' then
  if redis.call('DEL', W) == 0 then
    return 0
  end
else
  expire_readers(now)
  local any = redis.call('EXISTS', R)
  redis.call('DEL', R, RH)
  if any == 0 then
    return 0
  end
end
wake_next(now, ARGV[2], ARGV[3])
return 1
