-- ARGV[1] 'w' a woken writer was gone | 'r' a woken reader was gone, ARGV[2] channel prefix,
-- ARGV[3] lock name, ARGV[4] the gone waiter's id. Wakes whoever may enter now. A gone waiter may
-- still be registered (its cancellation lost; a woken reader stays registered until it enters): it is
-- dropped. On the write side the writer last woken is dropped too, so it is not woken again and again.
redis.call('ZREM', WQ, ARGV[4])
drop_reader(ARGV[4])
if ARGV[1] == 'w' then
  local woken = redis.call('GET', WOKEN)
  if woken then
    redis.call('ZREM', WQ, woken)
    redis.call('DEL', WOKEN)
  end
end
wake_next(now_ms(), ARGV[2], ARGV[3])
return 1
