-- Shared prelude: an owner's holds on a lock kept as a hash {o = owner, c = hold count, t = token}
-- (the exclusive lock, the fair lock, a read-write lock's write side), so the kinds cannot drift apart.

-- The owner asks again. 'r' (re-entry) deepens its hold; 'n' finds a leftover of an earlier attempt
-- of the same acquisition (its give-back did not arrive): one hold again, so that one release frees
-- it. Either way the lease starts over. Returns the grant {1, token, holds}.
local function hold_again(lock, mode, lease_ms)
  local holds = 1
  if mode == 'r' then
    holds = redis.call('HINCRBY', lock, 'c', 1)
  else
    redis.call('HSET', lock, 'c', 1)
  end
  redis.call('PEXPIRE', lock, lease_ms)
  return {1, redis.call('HGET', lock, 't'), holds}
end

-- Drops one hold of owner ('0') or all of them ('1'). Returns the holds left, 0 once the lock is
-- deleted (the caller wakes whoever is next), or -1 when owner does not hold the lock.
local function drop_hold(lock, owner, all)
  if redis.call('HGET', lock, 'o') ~= owner then
    return -1
  end
  if all == '0' then
    local holds = redis.call('HINCRBY', lock, 'c', -1)
    if holds > 0 then
      return holds
    end
  end
  redis.call('DEL', lock)
  return 0
end
