-- Shared prelude of the exclusive lock's scripts: the lock is one string key,
--   "<token>|<holds>|<hand-offs in a row>|<flags>|<owner>"   TTL = the lease,
-- so that a grant is one SET … PX where a hash took HSET + PEXPIRE, and a release one GET + DEL.
-- Flags: 'w' a waiter may be registered (release wakes one only then: an uncontended release never looks
-- at the waiters key); 'r' a reservation: the lock is free but kept for the waiter id in the owner field
-- (release-handoff.lua). A key of another type (the hash of a Locksmith before 0.9) makes GET fail with
-- WRONGTYPE: mixed versions refuse each other, they never both grant.
local function lock_parse(value)
  local token, holds, run, flags, owner = string.match(value, '^(%d+)|(%d+)|(%d+)|(%a*)|(.*)$')
  if not token then
    error('LOCKSMITH lock key holds an unknown value; not a lock of this version')
  end
  return {token = token, holds = tonumber(holds), run = tonumber(run), flags = flags, owner = owner,
    reserved = string.find(flags, 'r', 1, true) ~= nil, marked = string.find(flags, 'w', 1, true) ~= nil}
end

local function lock_value(token, holds, run, flags, owner)
  return token .. '|' .. holds .. '|' .. run .. '|' .. flags .. '|' .. owner
end

-- Reads the lock: nil when free, else the parsed value; raises on a value of no known form.
local function lock_read(key)
  local value = redis.call('GET', key)
  if not value then
    return nil
  end
  return lock_parse(value)
end
