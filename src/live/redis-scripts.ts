/**
 * The Lua scripts of the shared slots and probes. Each runs atomically in Redis, on Redis's own
 * clock (TIME), so replicas whose clocks differ still agree on which lease has run out.
 */

/** Milliseconds on the Redis server's clock. */
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS[1] the slots of one limit (a sorted set: member → lease end); ARGV limit, member, lease ms.
 * Drops the leases that ran out (a dead replica's), then takes a slot when one is free. 1 or 0.
 */
export const TAKE_SLOT = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) * 2)
return 1`;

/** KEYS[1] as above; ARGV member, lease ms. Extends a held slot's lease (not one already dropped). */
export const RENEW_SLOT = `${NOW}
local n = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return n`;

/** KEYS[1] a probe right; ARGV the holder. Deletes it only when that holder still has it. */
export const END_PROBE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
