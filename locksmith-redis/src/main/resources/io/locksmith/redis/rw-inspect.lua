-- ARGV[1] 'w' the writer | 'r' the readers. Returns {} if that side is free, else
-- {owner, holds, token, pttl, waiters}; for the readers: the reader whose lease ends last, the number
-- of read holds of all readers, that reader's token and remaining lease. waiters = writers + readers.
local now = now_ms()
local waiters = redis.call('ZCOUNT', WQ, '(' .. now, '+inf') + redis.call('ZCOUNT', RQ, '(' .. now, '+inf')
if ARGV[1] == 'w' then
  local h = redis.call('HMGET', W, 'o', 'c', 't')
  if not h[1] then
    return {}
  end
  return {h[1], h[2], h[3], redis.call('PTTL', W), waiters}
end
local readers = redis.call('ZRANGEBYSCORE', R, '(' .. now, '+inf', 'WITHSCORES')
if #readers == 0 then
  return {}
end
local holds = 0
for i = 1, #readers, 2 do
  holds = holds + tonumber(redis.call('HGET', RH, 'c:' .. readers[i]) or '0')
end
local last = readers[#readers - 1]
return {last, tostring(holds), redis.call('HGET', RH, 't:' .. last) or '0',
  tonumber(readers[#readers]) - now, waiters}
