/**
 * The webhook settings (docs/operating.md, "Settings"; docs/webhooks.md), read from the
 * environment and checked at start: a malformed one stops `gateway start` with its name.
 */

/** How deliveries are sent and retried. */
export interface WebhookSettings {
  /** GATEWAY_WEBHOOK_ALLOW_PRIVATE: private, loopback and link-local addresses (and http://) allowed. */
  readonly allowPrivate: boolean;
  /** GATEWAY_WEBHOOK_TIMEOUT_MS: an attempt's answer (its status and headers, the connection included) must arrive within this. */
  readonly timeoutMs: number;
  /** GATEWAY_WEBHOOK_RETRY_BASE_MS: the wait after the first failed attempt; each next one doubles, with jitter. */
  readonly retryBaseMs: number;
  /** GATEWAY_WEBHOOK_RETRY_MAX_MS: the longest wait between attempts. */
  readonly retryMaxMs: number;
  /** GATEWAY_WEBHOOK_GIVE_UP_MS: no attempt is made this long after the event (or after "send again"); the delivery is failed. */
  readonly giveUpMs: number;
  /** GATEWAY_WEBHOOK_POLL_MS: how often a replica looks for deliveries due. */
  readonly pollMs: number;
  /** GATEWAY_WEBHOOK_DAYS: days finished deliveries stay in the log; 0 keeps them. */
  readonly days: number;
  /** GATEWAY_WEBHOOK_CONCURRENCY: attempts one replica has under way at once (its slots; each holds at most one connection). */
  readonly concurrency: number;
  /** GATEWAY_WEBHOOK_PER_ENDPOINT: of those slots, how many one endpoint may hold, so a receiver that never answers cannot take them all. */
  readonly perEndpoint: number;
}

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  allowPrivate: false,
  timeoutMs: 10_000,
  retryBaseMs: 5_000,
  retryMaxMs: 3_600_000,
  giveUpMs: 86_400_000,
  pollMs: 1_000,
  days: 7,
  concurrency: 16,
  perEndpoint: 4,
};

/** The settings from the environment, each checked; throws naming the first bad one. */
export function webhookSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): WebhookSettings {
  const d = DEFAULT_WEBHOOK_SETTINGS;
  const whole = (raw: string | undefined, name: string, fallback: number, min: number, max: number) => {
    if (raw === undefined || raw.trim() === '') return fallback;
    const n = Number(raw);
    if (!(Number.isInteger(n) && n >= min && n <= max)) throw new Error(`${name} must be a whole number from ${min} to ${max}`);
    return n;
  };
  const flag = env.GATEWAY_WEBHOOK_ALLOW_PRIVATE;
  const concurrency = whole(env.GATEWAY_WEBHOOK_CONCURRENCY, 'GATEWAY_WEBHOOK_CONCURRENCY', d.concurrency, 1, 256);
  const s: WebhookSettings = {
    allowPrivate: flag !== undefined && /^(1|true|yes|on)$/i.test(flag.trim()),
    timeoutMs: whole(env.GATEWAY_WEBHOOK_TIMEOUT_MS, 'GATEWAY_WEBHOOK_TIMEOUT_MS', d.timeoutMs, 100, 60_000),
    retryBaseMs: whole(env.GATEWAY_WEBHOOK_RETRY_BASE_MS, 'GATEWAY_WEBHOOK_RETRY_BASE_MS', d.retryBaseMs, 10, 3_600_000),
    retryMaxMs: whole(env.GATEWAY_WEBHOOK_RETRY_MAX_MS, 'GATEWAY_WEBHOOK_RETRY_MAX_MS', d.retryMaxMs, 10, 86_400_000),
    giveUpMs: whole(env.GATEWAY_WEBHOOK_GIVE_UP_MS, 'GATEWAY_WEBHOOK_GIVE_UP_MS', d.giveUpMs, 1_000, 604_800_000),
    pollMs: whole(env.GATEWAY_WEBHOOK_POLL_MS, 'GATEWAY_WEBHOOK_POLL_MS', d.pollMs, 10, 60_000),
    days: whole(env.GATEWAY_WEBHOOK_DAYS, 'GATEWAY_WEBHOOK_DAYS', d.days, 0, 3650),
    concurrency,
    // Unset, the default share, within a smaller concurrency; set, it must fit in the slots.
    perEndpoint: whole(env.GATEWAY_WEBHOOK_PER_ENDPOINT, 'GATEWAY_WEBHOOK_PER_ENDPOINT', Math.min(d.perEndpoint, concurrency), 1, concurrency),
  };
  if (s.retryMaxMs < s.retryBaseMs) throw new Error('GATEWAY_WEBHOOK_RETRY_MAX_MS must be at least GATEWAY_WEBHOOK_RETRY_BASE_MS');
  return s;
}
