/**
 * Every setting the gateway reads from the environment, with its default and what it is for: the
 * list `gateway init` writes into `.env.example` (src/cli/env-example.ts). The variables themselves
 * are read where they are used (settingsFromEnv in app.ts, log.ts, the demo); test/unit/settings-list.test.ts
 * fails when a variable read anywhere in src/ is missing here, or when this list and the settings
 * table of docs/operating.md disagree, so the three cannot drift apart.
 */
export interface Setting {
  readonly name: string;
  /** The value used when it is unset, as an operator would write it; null: none (the feature is off). */
  readonly default: string | null;
  /** What it is for, in one or two short sentences. */
  readonly about: string;
}

/** The settings, in the order of the table in docs/operating.md. */
export const SETTINGS: readonly Setting[] = [
  { name: 'PORT', default: '8080', about: 'Port to listen on (0 picks a free one; the log line "gateway listening" says which).' },
  { name: 'HOST', default: '0.0.0.0', about: 'Address to listen on (the demo listens on 127.0.0.1).' },
  {
    name: 'GATEWAY_CONFIG_DIR',
    default: '.',
    about: 'Where routes.yaml and channels.yaml are; --config DIR, which every command reading the config takes, wins over it.',
  },
  { name: 'GATEWAY_CONFIG_EXTRA', default: null, about: 'More config directories, separated by ":", whose routes, channels and fragments are merged in.' },
  {
    name: 'GATEWAY_DB',
    default: 'data/gateway.db',
    about:
      'The store: a file path, relative to the current directory (embedded SQLite, one process), or postgres://user:password@host/db shared by several replicas; --db wins over it.',
  },
  { name: 'GATEWAY_DB_CONNECT_TIMEOUT_MS', default: '5000', about: 'PostgreSQL only: the longest wait for a connection (100-600000).' },
  { name: 'GATEWAY_DB_STATEMENT_TIMEOUT_MS', default: '10000', about: 'PostgreSQL only: a statement running longer is cancelled (100-3600000).' },
  { name: 'GATEWAY_DB_IDLE_TX_TIMEOUT_MS', default: '10000', about: 'PostgreSQL only: a session idle inside a transaction is ended (100-3600000).' },
  {
    name: 'GATEWAY_STORE_THREAD',
    default: '1',
    about: "The embedded store only: 0 runs SQLite's statements and commits on the event loop instead of a thread of their own.",
  },
  { name: 'GATEWAY_REDIS', default: null, about: 'redis:// or rediss:// URL through which replicas share limits, breakers, token changes and reloads.' },
  { name: 'GATEWAY_REDIS_PREFIX', default: 'gateway:', about: 'The start of every Redis key and pub/sub channel, so several gateways can share one Redis.' },
  { name: 'GATEWAY_REPLICA_ID', default: null, about: "This replica's name on task leases and in logs (unset: <hostname>-<pid>-<random>)." },
  { name: 'GATEWAY_TASK_LEASE_MS', default: '30000', about: 'How long a task stays with a replica that stopped renewing its lease (300-600000).' },
  { name: 'GATEWAY_AUTH_CACHE_MS', default: null, about: "How long a key's lookup is trusted (0-600000; unset: 5000 on SQLite, 1000 on PostgreSQL)." },
  { name: 'LOG_LEVEL', default: 'info', about: 'pino log level; logs are JSON lines on stdout.' },
  { name: 'GATEWAY_PUBLIC_URL', default: null, about: "The base URL clients reach the gateway at, for links and download URLs (unset: each request's Host)." },
  {
    name: 'GATEWAY_TLS_CERT',
    default: null,
    about: 'A PEM file of the certificate (and its chain) to serve HTTPS with; set with GATEWAY_TLS_KEY, both or neither.',
  },
  {
    name: 'GATEWAY_TLS_KEY',
    default: null,
    about: "A PEM file of the certificate's private key, unencrypted; a changed pair is reloaded without dropping connections.",
  },
  {
    name: 'GATEWAY_TRUST_PROXY',
    default: 'false',
    about: 'The proxies whose X-Forwarded-For, -Proto and -Host are believed: false, true, a number of hops, or addresses and CIDRs.',
  },
  {
    name: 'GATEWAY_CORS_ORIGINS',
    default: null,
    about: 'Browser origins that may call the public routes: exact origins, comma-separated, or * for routes that take a key.',
  },
  {
    name: 'GATEWAY_REQUEST_LOG_DAYS',
    default: '7',
    about: 'Days the request log (GET /admin/requests) keeps one record per public request; 0 turns it off (0-3650).',
  },
  {
    name: 'GATEWAY_SETTLE_FLUSH_MS',
    default: '200',
    about: 'Longest a settlement of a synchronous request waits to be written, in a batch, after its answer left; a crash gives back what waited (10-60000).',
  },
  {
    name: 'GATEWAY_AUDIT_DAYS',
    default: '365',
    about: 'Days the audit log (GET /admin/audit) keeps its records of operator actions; 0 keeps them forever (0-36500).',
  },
  { name: 'GATEWAY_LINK_TTL_MS', default: '3600000', about: 'How long a link handed out instead of a vendor URL serves (60000-604800000).' },
  {
    name: 'GATEWAY_ARCHIVE',
    default: null,
    about: 'Where completed results are copied and served from: a directory, or s3://bucket[/prefix] (unset: no archive).',
  },
  { name: 'GATEWAY_ARCHIVE_KEEP_DAYS', default: '7', about: "Days an archived file is kept when neither its route's nor its token's keep_days says (1-3650)." },
  {
    name: 'GATEWAY_ARCHIVE_MAX_MB',
    default: '4096',
    about: 'The largest file the archive copies, in megabytes; a larger one stays with the vendor (1-1048576).',
  },
  { name: 'GATEWAY_ARCHIVE_COPIES', default: '2', about: 'Copies into the archive under way at once on each replica (1-64).' },
  {
    name: 'GATEWAY_ARCHIVE_ATTEMPTS',
    default: '8',
    about: 'Failed attempts after which a copy is given up (1-100); retries wait 30 s, then twice as long each time.',
  },
  {
    name: 'GATEWAY_ARCHIVE_S3_PATH_STYLE',
    default: '0',
    about: '1: address the bucket in the path (most S3-compatible servers); the AWS_* variables say where it is.',
  },
  {
    name: 'GATEWAY_ARCHIVE_S3_CONNECT_TIMEOUT_MS',
    default: '3000',
    about: 'An S3 archive: the longest wait for a connection to the bucket (100-600000).',
  },
  {
    name: 'GATEWAY_ARCHIVE_TIMEOUT_MS',
    default: '10000',
    about: "The longest wait for the archive's answer (a GET's first byte, a HEAD); past it a download goes to the vendor (100-600000).",
  },
  {
    name: 'GATEWAY_ARCHIVE_IDLE_TIMEOUT_MS',
    default: '30000',
    about: 'A copy or S3 connection in which no byte moves this long is cut; the copy is tried again (100-3600000).',
  },
  { name: 'GATEWAY_DEMO_KEY', default: null, about: 'gateway demo only: the API key to accept (unset: the demo makes one).' },
  { name: 'GATEWAY_ADMIN_KEY', default: null, about: 'Opens /admin/* and /metrics to "Authorization: Bearer <key>" (unset: closed to everyone).' },
  { name: 'GATEWAY_WATCH', default: '1', about: '0 stops reloading when a config file changes (SIGHUP and POST /admin/reload still reload).' },
  {
    name: 'GATEWAY_RELOAD_DEBOUNCE_MS',
    default: '200',
    about: 'Quiet time after the last file change before a watched reload, of the configuration or of the TLS certificate (0-60000).',
  },
  { name: 'GATEWAY_HEADERS_TIMEOUT_MS', default: '30000', about: "A client's headers must arrive within this, else 408 (1000-3600000)." },
  { name: 'GATEWAY_REQUEST_TIMEOUT_MS', default: '300000', about: "A client's whole request must arrive within this, else 408 (up to 3600000)." },
  {
    name: 'GATEWAY_DRAIN_MS',
    default: '25000',
    about: 'On SIGTERM or SIGINT, how long requests in flight may finish before their connections are cut (0-600000).',
  },
  { name: 'GATEWAY_STRICT', default: '0', about: '1: an enabled channel with an unset variable fails the start and every reload, instead of being left out.' },
  { name: 'GATEWAY_BODY_BUDGET_MB', default: null, about: 'Megabytes of request bodies held at once; past it, 503 server_busy (unset: heap limit / 12).' },
  {
    name: 'GATEWAY_WEBHOOK_ALLOW_PRIVATE',
    default: '0',
    about: '1: webhooks may go to private, loopback and link-local addresses, and over http:// (for receivers on your own network).',
  },
  {
    name: 'GATEWAY_WEBHOOK_TIMEOUT_MS',
    default: '10000',
    about: "A webhook attempt's answer (status and headers) must arrive within this, else it is retried (100-60000).",
  },
  {
    name: 'GATEWAY_WEBHOOK_RETRY_BASE_MS',
    default: '5000',
    about: 'The wait after a first failed webhook attempt; each next wait doubles, with jitter (10-3600000).',
  },
  { name: 'GATEWAY_WEBHOOK_RETRY_MAX_MS', default: '3600000', about: 'The longest wait between two attempts of a webhook delivery (10-86400000).' },
  {
    name: 'GATEWAY_WEBHOOK_GIVE_UP_MS',
    default: '86400000',
    about: 'A webhook delivery is retried until this long after its event, then failed (1000-604800000).',
  },
  { name: 'GATEWAY_WEBHOOK_POLL_MS', default: '1000', about: 'How often each replica looks for webhook deliveries due (10-60000).' },
  { name: 'GATEWAY_WEBHOOK_CONCURRENCY', default: '16', about: 'Webhook attempts each replica has under way at once (1-256).' },
  {
    name: 'GATEWAY_WEBHOOK_PER_ENDPOINT',
    default: '4',
    about: 'Of those, how many may go to one endpoint, so a receiver that never answers holds only its share (1 to the concurrency).',
  },
  { name: 'GATEWAY_WEBHOOK_DAYS', default: '7', about: 'Days finished webhook deliveries stay in the delivery log; 0 keeps them (0-3650).' },
];
