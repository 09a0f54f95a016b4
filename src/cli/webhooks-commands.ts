/** `gateway webhooks …`: webhook endpoints and the delivery log in the store of GATEWAY_DB (docs/webhooks.md), for operators. */
import { GatewayError } from '../errors/gateway-error.js';
import { CLI_ACTOR, type Operator } from '../records/audit.js';
import { DELIVERY_STATUSES, WEBHOOK_EVENTS, type DeliveryStatus, type Store, type WebhookDelivery, type WebhookEndpoint } from '../store/store.js';
import type { EndpointInput } from '../webhooks/manage-endpoints.js';
import { CliExit, HelpAsked, parseCommand, usageError, usageOf, usageTable, wholeNumber, type UsageEntry } from './args.js';
import { placedEnv, requireStore, storePlace, takePlaceFlags } from './locate.js';

/** The forms of the webhooks commands, for the usage texts. */
export const WEBHOOKS_USAGE = {
  list: {
    synopsis: 'webhooks list [--token T] [--group G] [--json]',
    about: "list webhook endpoints (never their secrets): all, a token's (and its group's), or a group's",
  },
  create: {
    synopsis: 'webhooks create (--token T | --group G) (--url URL | --callback-origin O…) --events E,… [--progress-seconds N] [--description D] [--disabled]',
    about: `register an endpoint; its secret is printed once on stdout.\n--events: some of ${WEBHOOK_EVENTS.join(', ')};\n--callback-origin (repeatable, a token's only, no --url): the origins its submissions'\ncallback_url may name, signed with this endpoint's secret`,
  },
  update: {
    synopsis: 'webhooks update <endpoint> [--url URL] [--callback-origin O]… [--events E,…] [--progress-seconds N] [--description D] [--enable|--disable]',
    about: 'change an endpoint (what is not named stays)',
  },
  rotate: {
    synopsis: 'webhooks rotate <endpoint> [--grace-seconds N]',
    about: 'a new secret, printed once; the old one keeps signing beside it for N seconds (default 86400)',
  },
  delete: { synopsis: 'webhooks delete <endpoint>', about: 'delete an endpoint; its pending deliveries are given up' },
  deliveries: {
    synopsis: 'webhooks deliveries [--endpoint E] [--task T] [--status S] [--limit N] [--json]',
    about: `the delivery log, newest first (--status: ${DELIVERY_STATUSES.join(', ')}; --limit: default 50)`,
  },
  resend: { synopsis: 'webhooks resend <delivery>', about: 'send a delivery again (the same webhook-id), whatever its status' },
} as const satisfies Record<string, UsageEntry>;

/** One line of an endpoint. */
function endpointLine(e: WebhookEndpoint): string {
  const owner = e.tokenId ? `token=${e.tokenId}` : `group=${e.group}`;
  const where = e.url ?? `callback_origins=${(e.callbackOrigins ?? []).join(',')}`;
  const grace = e.previousSecretUntil !== null && e.previousSecret !== null ? `  previous_secret_until=${new Date(e.previousSecretUntil).toISOString()}` : '';
  return `${e.id}  ${owner}  ${where}  events=${e.events.join(',')}  progress_seconds=${e.progressEverySeconds}${e.enabled ? '' : '  disabled'}${grace}${e.description ? `  "${e.description}"` : ''}`;
}

/** One line of a delivery. */
function deliveryLine(d: WebhookDelivery): string {
  const last = d.lastCode !== null ? `  last_status=${d.lastCode}` : d.lastError ? `  last_error="${d.lastError}"` : '';
  const next = d.status === 'pending' ? `  next=${new Date(d.nextAt).toISOString()}` : '';
  return `${d.id}  ${new Date(d.createdAt).toISOString()}  ${d.event}  task=${d.taskId}  endpoint=${d.endpointId}  ${d.status}  attempts=${d.attempts}${last}${next}  ${d.url}`;
}

const list = (raw: string | undefined) =>
  raw
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The fields create and update share, from their flags. */
function endpointFlags(values: Record<string, string | boolean | string[] | undefined>, u: string): EndpointInput {
  const events = list(values.events as string | undefined);
  if (events?.some((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e))) throw usageError(`--events takes some of ${WEBHOOK_EVENTS.join(', ')}`, u);
  const progress = values['progress-seconds'] === undefined ? undefined : wholeNumber(values['progress-seconds'] as string, '--progress-seconds', 1, 86_400, u);
  return {
    ...(values.url !== undefined ? { url: values.url as string } : {}),
    ...(values['callback-origin'] !== undefined ? { callback_origins: values['callback-origin'] as string[] } : {}),
    ...(events ? { events } : {}),
    ...(progress !== undefined ? { progress_interval_seconds: progress } : {}),
    ...(values.description !== undefined ? { description: values.description as string } : {}),
  };
}

const ENDPOINT_OPTIONS = {
  url: { type: 'string' },
  'callback-origin': { type: 'string', multiple: true },
  events: { type: 'string' },
  'progress-seconds': { type: 'string' },
  description: { type: 'string' },
} as const;

/** A subcommand checks its arguments, then acts on the store with the operator and the private-address setting. */
type Act = (store: Store, op: Operator, allowPrivate: boolean) => Promise<void>;

const SUBCOMMANDS = new Map<string, (args: string[]) => Act>([
  [
    'list',
    (args) => {
      const { values } = parseCommand(args, usageOf(WEBHOOKS_USAGE.list), { token: { type: 'string' }, group: { type: 'string' }, json: { type: 'boolean' } });
      return async (store) => {
        const { findToken, unknownToken } = await import('../tokens/token-ref.js');
        const token = values.token === undefined ? null : await findToken(store, values.token);
        if (values.token !== undefined && !token) throw new CliExit(unknownToken(values.token), 1);
        const endpoints = await store.listWebhookEndpoints({ tokenId: token?.id ?? null, group: values.group ?? token?.group ?? null });
        const { endpointView } = await import('../webhooks/manage-endpoints.js');
        process.stdout.write(values.json ? `${JSON.stringify(endpoints.map(endpointView), null, 2)}\n` : endpoints.map((e) => `${endpointLine(e)}\n`).join(''));
      };
    },
  ],
  [
    'create',
    (args) => {
      const u = usageOf(WEBHOOKS_USAGE.create);
      const { values } = parseCommand(args, u, { ...ENDPOINT_OPTIONS, token: { type: 'string' }, group: { type: 'string' }, disabled: { type: 'boolean' } });
      const input: EndpointInput = {
        ...endpointFlags(values, u),
        ...(values.token !== undefined ? { token: values.token } : {}),
        ...(values.group !== undefined ? { group: values.group } : {}),
        ...(values.disabled ? { enabled: false } : {}),
      };
      if (input.events === undefined) throw usageError('--events is required', u);
      return async (_store, op, allowPrivate) => {
        const { registerEndpoint } = await import('../webhooks/manage-endpoints.js');
        const { endpoint, secret } = await registerEndpoint(op, input, allowPrivate);
        process.stderr.write(`created webhook endpoint ${endpointLine(endpoint)}; its secret is shown once:\n`);
        process.stdout.write(`${secret}\n`);
      };
    },
  ],
  [
    'update',
    (args) => {
      const u = usageOf(WEBHOOKS_USAGE.update);
      const { values, positionals } = parseCommand(
        args,
        u,
        { ...ENDPOINT_OPTIONS, enable: { type: 'boolean' }, disable: { type: 'boolean' } },
        { required: ['endpoint'] },
      );
      if (values.enable && values.disable) throw usageError('--enable or --disable, not both', u);
      const input: EndpointInput = { ...endpointFlags(values, u), ...(values.enable ? { enabled: true } : values.disable ? { enabled: false } : {}) };
      if (Object.keys(input).length === 0) throw usageError('nothing to change', u);
      return async (_store, op, allowPrivate) => {
        const { changeEndpoint } = await import('../webhooks/manage-endpoints.js');
        process.stdout.write(`${endpointLine(await changeEndpoint(op, positionals[0] ?? '', input, allowPrivate))}\n`);
      };
    },
  ],
  [
    'rotate',
    (args) => {
      const u = usageOf(WEBHOOKS_USAGE.rotate);
      const { values, positionals } = parseCommand(args, u, { 'grace-seconds': { type: 'string' } }, { required: ['endpoint'] });
      const grace = values['grace-seconds'] === undefined ? undefined : wholeNumber(values['grace-seconds'], '--grace-seconds', 0, 7 * 86_400, u);
      return async (_store, op) => {
        const { rotateEndpointSecret } = await import('../webhooks/manage-endpoints.js');
        const { endpoint, secret } = await rotateEndpointSecret(op, positionals[0] ?? '', grace);
        process.stderr.write(`rotated ${endpointLine(endpoint)}; the new secret is shown once:\n`);
        process.stdout.write(`${secret}\n`);
      };
    },
  ],
  [
    'delete',
    (args) => {
      const [id = ''] = parseCommand(args, usageOf(WEBHOOKS_USAGE.delete), {}, { required: ['endpoint'] }).positionals;
      return async (_store, op) => {
        const { deleteEndpoint } = await import('../webhooks/manage-endpoints.js');
        await deleteEndpoint(op, id);
        process.stdout.write(`deleted webhook endpoint ${id}\n`);
      };
    },
  ],
  [
    'deliveries',
    (args) => {
      const u = usageOf(WEBHOOKS_USAGE.deliveries);
      const { values } = parseCommand(args, u, {
        endpoint: { type: 'string' },
        task: { type: 'string' },
        status: { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean' },
      });
      if (values.status !== undefined && !(DELIVERY_STATUSES as readonly string[]).includes(values.status))
        throw usageError(`--status takes one of ${DELIVERY_STATUSES.join(', ')}`, u);
      const limit = values.limit === undefined ? 50 : wholeNumber(values.limit, '--limit', 1, 500, u);
      return async (store) => {
        const rows = await store.listDeliveries({
          endpointId: values.endpoint ?? null,
          taskId: values.task ?? null,
          status: (values.status as DeliveryStatus | undefined) ?? null,
          limit,
        });
        const { deliveryView } = await import('../admin/webhooks-admin.js');
        process.stdout.write(values.json ? `${JSON.stringify(rows.map(deliveryView), null, 2)}\n` : rows.map((d) => `${deliveryLine(d)}\n`).join(''));
      };
    },
  ],
  [
    'resend',
    (args) => {
      const [id = ''] = parseCommand(args, usageOf(WEBHOOKS_USAGE.resend), {}, { required: ['delivery'] }).positionals;
      return async (store, op) => {
        const d = await store.resendDelivery(id, Date.now());
        if (!d) throw new CliExit(`no webhook delivery ${JSON.stringify(id.slice(0, 100))}`, 1);
        const { recordAudit } = await import('../records/audit.js');
        await recordAudit(op, 'webhook.resend', id, null, { task_id: d.taskId, event: d.event });
        process.stdout.write(`${deliveryLine(d)}\n`);
      };
    },
  ],
]);

/** Runs `gateway webhooks <subcommand> …` on the store of GATEWAY_DB. */
export async function webhooksCommand(args: readonly string[]): Promise<void> {
  const all = `usage: gateway webhooks <command> [--db FILE|URL]\n${usageTable(Object.values(WEBHOOKS_USAGE))}`;
  // Every webhooks command takes it, before or after its own arguments (./locate.ts).
  const places = takePlaceFlags(args, ['db'], all);
  const [sub, ...rest] = places.rest;
  if (sub === '--help' || sub === '-h' || sub === 'help') throw new HelpAsked(all);
  const subcommand = sub === undefined ? undefined : SUBCOMMANDS.get(sub);
  if (!subcommand) throw usageError(sub === undefined ? 'which webhooks command?' : `unknown webhooks command '${sub}'`, all);
  const act = subcommand(rest);
  const place = storePlace(places.db);
  requireStore(place);
  const [{ settingsFromEnv, openConfiguredStore }, { webhookSettingsFromEnv }] = await Promise.all([
    import('../app.js'),
    import('../webhooks/webhook-settings.js'),
  ]);
  let allowPrivate: boolean;
  try {
    allowPrivate = webhookSettingsFromEnv(process.env).allowPrivate;
  } catch (err) {
    throw new CliExit((err as Error).message, 2);
  }
  const store = await openConfiguredStore(settingsFromEnv(placedEnv(null, place)), { command: true }).catch((err: unknown) => {
    throw new CliExit((err as Error).message, 2);
  });
  const op: Operator = { store, actor: CLI_ACTOR, lost: (message) => process.stderr.write(`warning: ${message}\n`) };
  try {
    await act(store, op, allowPrivate);
  } catch (err) {
    // What the admin routes answer 400 or 404 is, here, a refusal with the same words.
    if (err instanceof GatewayError && (err.code === 'invalid_request' || err.code === 'not_found'))
      throw new CliExit(err.message, err.code === 'not_found' ? 1 : 2);
    throw err;
  } finally {
    await store.close();
  }
}
