/**
 * The Lua scripts of the shared slots and probes. Each runs atomically in Redis, on Redis's own
 * clock (TIME), so replicas whose clocks differ still agree on which lease has run out.
 */

/** Milliseconds on the Redis server's clock. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS[1] the slots of one limit (a sorted set: member → lease end); ARGV limit, member, lease ms.
 * Drops the leases that ran out (a dead replica's), then takes a slot when one is free: the number
 * of slots held with it (a key's headers say how many are left), or 0 when none was free.
 */
export const TAKE_SLOT = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
return held + 1`;

/**
 * KEYS[1] the requests of one key's window (a sorted set: member → when it came, on Redis's clock);
 * ARGV limit, window ms, member. A sliding log: the requests older than the window leave, then this
 * one is counted when fewer than `limit` remain, so no window of that length ever holds more,
 * whichever replica counts. Answers {admitted 1|0, remaining, ms until the oldest leaves, ms until
 * the newest leaves}; a refused request is not counted.
 */
export const HIT_WINDOW = `${NOW}
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
local admitted = 0
if n < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  n = n + 1
  admitted = 1
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local first = oldest[2] and tonumber(oldest[2]) or now
local last = newest[2] and tonumber(newest[2]) or now
return {admitted, limit - n, first + window - now, last + window - now}`;

/** KEYS[1] as above; ARGV member, lease ms. Extends a held slot's lease (not one already dropped). */
export const RENEW_SLOT = `${NOW}
local n = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return n`;

/** KEYS[1] a probe right; ARGV the holder. Deletes it only when that holder still has it. */
export const END_PROBE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * KEYS[1] a window as HIT_WINDOW keeps it; ARGV window ms, then pairs of (age ms, member): the
 * requests one replica counted, put back after Redis was away (it may have restarted empty). Each
 * goes in at `now - age` unless its member is there already, so a request is never counted twice.
 */
export const RESTORE_WINDOW = `${NOW}
local window = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
for i = 2, #ARGV - 1, 2 do
  local age = tonumber(ARGV[i])
  if age >= 0 and age < window then redis.call('ZADD', KEYS[1], 'NX', now - age, ARGV[i + 1]) end
end
redis.call('PEXPIRE', KEYS[1], window)
return redis.call('ZCARD', KEYS[1])`;
