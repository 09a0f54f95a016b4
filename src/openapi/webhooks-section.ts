/**
 * The `webhooks` of the OpenAPI document (docs/webhooks.md): the requests the gateway sends to an
 * endpoint an operator registered, or to a submission's `callback_url`. Standard Webhooks: the
 * headers `webhook-id`, `webhook-timestamp`, `webhook-signature`, and a JSON body `{ type,
 * timestamp, data }` whose `data` is the task as its family's query route answers it.
 */
import { WEBHOOK_EVENTS, type WebhookEvent } from '../store/store.js';
import type { JsonSchema, Operation, Parameter } from './openapi-types.js';

/** The component schema of a delivery's body. */
export const WEBHOOK_EVENT_SCHEMA: JsonSchema = {
  type: 'object',
  description: 'A webhook delivery (Standard Webhooks). Receivers verify the signature over the raw body, then deduplicate by the webhook-id header.',
  required: ['type', 'timestamp', 'data'],
  properties: {
    type: { type: 'string', enum: [...WEBHOOK_EVENTS] },
    timestamp: { type: 'string', format: 'date-time', description: 'When the event happened (not when this attempt was sent: that is webhook-timestamp).' },
    data: {
      description:
        "The task as the query route of its family answers it (GET /v1/videos/{task_id} for a task made by POST /v1/videos), its result links the gateway's own. A rendering over 256 KB is replaced by { id, status, truncated: true }.",
    },
  },
};

const HEADERS: readonly Parameter[] = [
  {
    name: 'webhook-id',
    in: 'header',
    required: true,
    description: 'The id of this delivery (`msg_…`), the same on every attempt and on "send again": deduplicate by it.',
    schema: { type: 'string' },
  },
  {
    name: 'webhook-timestamp',
    in: 'header',
    required: true,
    description: 'When this attempt was signed, in Unix seconds; refuse one far from your clock (the usual tolerance is 5 minutes).',
    schema: { type: 'string', pattern: '^[0-9]+$' },
  },
  {
    name: 'webhook-signature',
    in: 'header',
    required: true,
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` keyed with the base64 bytes after `whsec_` of the endpoint secret; two while a rotated secret is still valid.',
    schema: { type: 'string' },
  },
];

const ABOUT: Readonly<Record<WebhookEvent, string>> = {
  'task.completed': 'A task completed; its results can be downloaded through the links in `data`.',
  'task.failed': 'A task failed (at the vendor, lost, or past its deadline); `data` carries the error. It was not charged.',
  'task.cancelled': 'A task was cancelled at the vendor (it failed with the code `task_cancelled`).',
  'task.progress': "A task moved on (its status or progress changed); sent at most once per the endpoint's progress interval per task.",
};

/** One `webhooks` entry per event. */
export function webhooksSection(): Record<string, { readonly post: Operation }> {
  const out: Record<string, { readonly post: Operation }> = {};
  for (const event of WEBHOOK_EVENTS) {
    out[event] = {
      post: {
        operationId: `webhook${event
          .split('.')
          .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
          .join('')}`,
        summary: `The ${event} event`,
        tags: ['webhooks'],
        description: `${ABOUT[event]} Sent to the endpoints of the task's API key and of its group that ask for it, and to the submission's callback_url. Retried with exponential backoff until a 2xx, for up to 24 hours.`,
        parameters: HEADERS,
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookEvent' } } } },
        responses: {
          '200': { description: 'Any 2xx: delivered. Anything else, or no answer within the timeout: tried again later.' },
          '400': { description: 'Refused (a signature that does not verify, say): tried again later, then given up.' },
        },
        security: [],
        'x-route-ids': [],
      },
    };
  }
  return out;
}
