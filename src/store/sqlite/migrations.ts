/**
 * The SQLite schema of the embedded store, as steps applied in order, each once; the store records
 * how many ran in `schema_version` (./database.ts). A change of schema is a new step at the end.
 */
export const MIGRATIONS: readonly string[] = [
  `CREATE TABLE tokens (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     key_hash TEXT NOT NULL UNIQUE,
     grp TEXT NOT NULL,
     models TEXT,
     quota INTEGER,
     used INTEGER NOT NULL DEFAULT 0,
     disabled INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL
   )`,
  `CREATE TABLE tasks (
     id TEXT PRIMARY KEY,
     token_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     route TEXT NOT NULL,
     model TEXT NOT NULL,
     upstream_model TEXT NOT NULL,
     channel TEXT NOT NULL,
     upstream_id TEXT,
     status TEXT NOT NULL,
     progress INTEGER NOT NULL DEFAULT 0,
     vendor_status TEXT,
     results TEXT NOT NULL DEFAULT '[]',
     error TEXT,
     context TEXT,
     seconds TEXT,
     size TEXT,
     price INTEGER NOT NULL,
     refunded INTEGER NOT NULL DEFAULT 0,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL,
     completed_at INTEGER,
     deadline_at INTEGER NOT NULL,
     version INTEGER NOT NULL
   );
   CREATE INDEX tasks_unfinished ON tasks (id) WHERE status IN ('submitting', 'queued', 'in_progress');`,
  // The usage ledger, and what a task needs for settlement. A store from before the ledger opens
  // with one debit row per token for what it had used, so its ledger balances from the start.
  `CREATE TABLE ledger (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     token_id TEXT NOT NULL,
     kind TEXT NOT NULL,
     ref TEXT NOT NULL,
     model TEXT NOT NULL,
     amount INTEGER NOT NULL,
     at INTEGER NOT NULL
   );
   CREATE INDEX ledger_by_token ON ledger (token_id, id);
   ALTER TABLE tasks ADD COLUMN pricing TEXT;
   ALTER TABLE tasks ADD COLUMN charged INTEGER;
   UPDATE tasks SET charged = CASE WHEN refunded = 1 THEN 0 ELSE price END WHERE status IN ('completed', 'failed');
   INSERT INTO ledger (token_id, kind, ref, model, amount, at)
     SELECT id, 'debit', 'opening-balance', '', used, CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM tokens WHERE used > 0;`,
  // Holds of synchronous requests in flight, so the debits of requests a crash cut off go back.
  `CREATE TABLE holds (
     ref TEXT PRIMARY KEY,
     token_id TEXT NOT NULL,
     model TEXT NOT NULL,
     amount INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX holds_by_expiry ON holds (expires_at);`,
  // Resources clients create besides tasks (assets), with their owner and the channel that holds them.
  `CREATE TABLE resources (
     kind TEXT NOT NULL,
     id TEXT NOT NULL,
     token_id TEXT NOT NULL,
     channel TEXT NOT NULL,
     vendor_id TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (kind, id)
   );`,
  // Leases: which replica follows an unfinished task, until when (docs/deploying.md, "Running several replicas").
  `ALTER TABLE tasks ADD COLUMN lease_owner TEXT;
   ALTER TABLE tasks ADD COLUMN lease_until INTEGER;`,
  // A token's own tasks, newest first, in pages (GET /v1/videos). `seq` orders tasks created in the
  // same millisecond as they were taken in; rows from before it keep their insertion order (rowid).
  `ALTER TABLE tasks ADD COLUMN seq INTEGER;
   UPDATE tasks SET seq = rowid;
   CREATE INDEX tasks_by_seq ON tasks (seq);
   CREATE INDEX tasks_by_token ON tasks (token_id, created_at, seq);`,
  // Links handed out instead of vendor URLs, and stored results (docs/client-api.md, "Links instead of vendor URLs").
  `CREATE TABLE links (
     id TEXT PRIMARY KEY,
     token_id TEXT NOT NULL,
     channel TEXT NOT NULL,
     url TEXT,
     data BLOB,
     content_type TEXT,
     created_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL
   );
   CREATE INDEX links_by_expiry ON links (expires_at);`,
  // Usage over a range of time (GET /admin/usage): the ledger read by `at`, not whole.
  `CREATE INDEX ledger_by_at ON ledger (at);`,
  // Operators' view of tasks (GET /admin/tasks): the states each task was seen in (a JSON array;
  // null for the rows before), every token's tasks newest first, by status, and a task's ledger rows.
  `ALTER TABLE tasks ADD COLUMN history TEXT;
   CREATE INDEX tasks_by_created ON tasks (created_at, id);
   CREATE INDEX tasks_by_status ON tasks (status, created_at, id);
   CREATE INDEX ledger_by_ref ON ledger (ref);`,
  // The request log (GET /admin/requests): one row per public request, newest first, by token, by
  // request id, by task (a task's timeline links to them); purged by age through requests_by_at.
  `CREATE TABLE requests (
     id TEXT PRIMARY KEY,
     at INTEGER NOT NULL,
     request_id TEXT NOT NULL,
     token_id TEXT,
     route TEXT NOT NULL,
     model TEXT,
     channel TEXT,
     status INTEGER NOT NULL,
     error TEXT,
     ms INTEGER NOT NULL,
     task_id TEXT,
     units INTEGER
   );
   CREATE INDEX requests_by_at ON requests (at, id);
   CREATE INDEX requests_by_token ON requests (token_id, at, id);
   CREATE INDEX requests_by_request_id ON requests (request_id);
   CREATE INDEX requests_by_task ON requests (task_id) WHERE task_id IS NOT NULL;`,
  // The audit log of operator actions (GET /admin/audit), newest first.
  `CREATE TABLE audit (
     id TEXT PRIMARY KEY,
     at INTEGER NOT NULL,
     actor TEXT NOT NULL,
     action TEXT NOT NULL,
     target TEXT,
     before TEXT,
     after TEXT
   );
   CREATE INDEX audit_by_at ON audit (at, id);`,
  // Rate limits of a key (docs/tokens-and-quota.md, "Rate limits"): requests per minute and in flight; null: none.
  `ALTER TABLE tokens ADD COLUMN rpm_limit INTEGER;
   ALTER TABLE tokens ADD COLUMN max_parallel INTEGER;`,
  // Expiry of a key (docs/tokens-and-quota.md, "Expiry"): Unix milliseconds; null: never.
  `ALTER TABLE tokens ADD COLUMN expires_at INTEGER;`,
  // A budget per period beside the quota (docs/tokens-and-quota.md, "Budgets"): its units, its period
  // (day, week, month or Nd; budget_days is N), when it was set, the start of the period budget_used
  // counts in; and on each ledger row, the budget (period and start) of the debit it made or gives back.
  `ALTER TABLE tokens ADD COLUMN budget INTEGER;
   ALTER TABLE tokens ADD COLUMN budget_period TEXT;
   ALTER TABLE tokens ADD COLUMN budget_days INTEGER;
   ALTER TABLE tokens ADD COLUMN budget_anchor INTEGER;
   ALTER TABLE tokens ADD COLUMN budget_start INTEGER;
   ALTER TABLE tokens ADD COLUMN budget_used INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE ledger ADD COLUMN budget_period TEXT;
   ALTER TABLE ledger ADD COLUMN budget_start INTEGER;`,
  // Names, rotation, last use, IP allow-lists (docs/tokens-and-quota.md, "Names and rotation", "Last
  // use", "IP allow-list"). Names become unique: of the tokens sharing a name, the oldest (created_at,
  // then id) keeps it and the others become `<name>-2`, `<name>-3`, … in that order; should such a
  // name be another token's already, the token id's first 8 characters follow (`ci-2-1a2b3c4d`).
  // The key a rotation replaced is found by its hash too (tokens_by_previous_key).
  `ALTER TABLE tokens ADD COLUMN previous_key_hash TEXT;
   ALTER TABLE tokens ADD COLUMN previous_key_expires_at INTEGER;
   ALTER TABLE tokens ADD COLUMN last_used_at INTEGER;
   ALTER TABLE tokens ADD COLUMN allowed_ips TEXT;
   CREATE TEMP TABLE token_renames AS
     SELECT id, name || '-' || n AS new_name
     FROM (SELECT id, name, row_number() OVER (PARTITION BY name ORDER BY created_at, id) AS n FROM tokens) WHERE n > 1;
   UPDATE token_renames SET new_name = new_name || '-' || substr(id, 1, 8) WHERE new_name IN (SELECT name FROM tokens);
   UPDATE tokens SET name = (SELECT new_name FROM token_renames r WHERE r.id = tokens.id) WHERE id IN (SELECT id FROM token_renames);
   DROP TABLE token_renames;
   CREATE UNIQUE INDEX tokens_by_name ON tokens (name);
   CREATE UNIQUE INDEX tokens_by_previous_key ON tokens (previous_key_hash) WHERE previous_key_hash IS NOT NULL;`,
  // Webhooks (docs/webhooks.md): endpoints of a token or a group (url null: the token's callback
  // endpoint, whose secret signs the deliveries to the callback_url its submissions name), the
  // callback URL of a task, and the deliveries, written with the task's terminal state.
  `CREATE TABLE webhook_endpoints (
     id TEXT PRIMARY KEY,
     token_id TEXT,
     grp TEXT,
     url TEXT,
     callback_origins TEXT,
     events TEXT NOT NULL,
     progress_every_s INTEGER NOT NULL,
     enabled INTEGER NOT NULL DEFAULT 1,
     description TEXT,
     secret TEXT NOT NULL,
     previous_secret TEXT,
     previous_secret_until INTEGER,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );
   CREATE INDEX webhook_endpoints_by_token ON webhook_endpoints (token_id) WHERE token_id IS NOT NULL;
   CREATE INDEX webhook_endpoints_by_group ON webhook_endpoints (grp) WHERE grp IS NOT NULL;
   CREATE UNIQUE INDEX webhook_endpoints_one_callback ON webhook_endpoints (token_id) WHERE url IS NULL;
   CREATE TABLE webhook_callbacks (
     task_id TEXT PRIMARY KEY,
     endpoint_id TEXT NOT NULL,
     url TEXT NOT NULL,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE webhook_deliveries (
     id TEXT PRIMARY KEY,
     endpoint_id TEXT NOT NULL,
     url TEXT NOT NULL,
     task_id TEXT NOT NULL,
     token_id TEXT NOT NULL,
     event TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     status TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     next_at INTEGER NOT NULL,
     window_start INTEGER NOT NULL,
     last_code INTEGER,
     last_error TEXT,
     last_at INTEGER,
     delivered_at INTEGER,
     lease_owner TEXT,
     lease_until INTEGER
   );
   CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'pending';
   CREATE INDEX webhook_deliveries_by_task ON webhook_deliveries (task_id, endpoint_id, event);
   CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, created_at);
   CREATE INDEX webhook_deliveries_by_created ON webhook_deliveries (created_at, id);`,
  // The result archive (docs/archive.md): whether one is configured (archive_on has a row), the
  // copies due, leased to one replica at a time, the files copied, and a token's retention. A
  // task's copy is queued by the trigger in the transaction that completes it, so a crash cannot
  // lose it; only tasks with a file result (a url) queue one. A task deleted (by its client) has
  // its files expire at once, for the next purge, and its copy dropped.
  `CREATE TABLE archive_on (one INTEGER PRIMARY KEY CHECK (one = 1));
   CREATE TABLE archive_jobs (
     id TEXT PRIMARY KEY,
     kind TEXT NOT NULL,
     token_id TEXT NOT NULL,
     route TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     due_at INTEGER NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0,
     last_error TEXT,
     failed INTEGER NOT NULL DEFAULT 0,
     lease_owner TEXT,
     lease_until INTEGER
   );
   CREATE INDEX archive_jobs_due ON archive_jobs (due_at) WHERE failed = 0;
   CREATE TABLE archive_files (
     owner TEXT NOT NULL,
     idx INTEGER NOT NULL,
     key TEXT NOT NULL,
     size INTEGER NOT NULL,
     content_type TEXT,
     archived_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL,
     PRIMARY KEY (owner, idx)
   );
   CREATE INDEX archive_files_by_expiry ON archive_files (expires_at);
   CREATE TABLE token_archive (token_id TEXT PRIMARY KEY, keep_days INTEGER NOT NULL);
   CREATE TRIGGER archive_task_completed AFTER UPDATE OF status ON tasks
     WHEN NEW.status = 'completed' AND OLD.status <> 'completed' AND EXISTS (SELECT 1 FROM archive_on)
       AND EXISTS (SELECT 1 FROM json_each(NEW.results) WHERE json_extract(value, '$.url') IS NOT NULL)
   BEGIN
     INSERT OR IGNORE INTO archive_jobs (id, kind, token_id, route, created_at, due_at)
       VALUES (NEW.id, 'task', NEW.token_id, NEW.route, IFNULL(NEW.completed_at, NEW.updated_at), IFNULL(NEW.completed_at, NEW.updated_at));
   END;
   CREATE TRIGGER archive_task_deleted AFTER DELETE ON tasks
   BEGIN
     UPDATE archive_files SET expires_at = 0 WHERE owner = OLD.id;
     DELETE FROM archive_jobs WHERE id = OLD.id;
   END;`,
];
