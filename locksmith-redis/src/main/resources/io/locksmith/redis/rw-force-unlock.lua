-- ARGV[1] 'w' remove the writer | 'r' remove every reader, ARGV[2] channel prefix, ARGV[3] lock name
-- Returns 1 if a hold was removed; then tells each removed holder (evict-notice.lua) and wakes whoever
-- may enter.
local now = now_ms()
if ARGV[1] == 'w' then
  local owner = redis.call('HGET', W, 'o')
  if redis.call('DEL', W) == 0 then
    return 0
  end
  notify_evicted(ARGV[2], owner, 'w' .. ARGV[3])
else
  expire_readers(now)
  local readers = redis.call('ZRANGE', R, 0, -1)
  redis.call('DEL', R, RH)
  if #readers == 0 then
    return 0
  end
  for _, owner in ipairs(readers) do
    notify_evicted(ARGV[2], owner, 'r' .. ARGV[3])
  end
end
wake_next(now, ARGV[2], ARGV[3])
return 1
