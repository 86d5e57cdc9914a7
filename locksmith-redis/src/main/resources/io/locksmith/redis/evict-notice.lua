-- Shared prelude: tells a hold's owner that someone else removed it (an operator's force-unlock), so
-- that its lease is LOST at once instead of at its next renewal. An owner id is
-- "<clientId>:<seq>[@<client name>]" and its client listens on <prefix><clientId>, the channel that
-- carries its wake-ups. Message: "!<owner> <tag><name>"; a wake-up starts with a waiter id, which
-- starts with a client id and so never with '!'.
local function notify_evicted(prefix, owner, tagged_name)
  local client = owner and string.match(owner, '^([^:]+):')
  if client then
    redis.call('PUBLISH', prefix .. client, '!' .. owner .. ' ' .. tagged_name)
  end
end
