// Receivers for each webhook format, as the vendors publish them, for tests. Each checks a
// request against the vendor's documented schema (required fields, types, enums, limits)
// and answers as the vendor does; the generic receiver verifies the Standard Webhooks
// signature with the `standardwebhooks` package, as a receiver of Keel's would.
//   PagerDuty Events API v2: developer.pagerduty.com/docs/events-api-v2/trigger-events
//   Opsgenie Alert API: docs.opsgenie.com/docs/alert-api (create alert, close alert)
//   Slack incoming webhooks: api.slack.com/messaging/webhooks, formatting (mrkdwn escaping)
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { WEBHOOK_KINDS } from '../../lib/domain/webhook';

const url = z.url({ protocol: /^https?$/ });

/** PagerDuty Events API v2, POST /v2/enqueue: an alert event (trigger) or a follow-up (acknowledge, resolve). */
export const pagerDutyEvent = z.discriminatedUnion('event_action', [
  z
    .object({
      routing_key: z.string().length(32),
      event_action: z.literal('trigger'),
      dedup_key: z.string().min(1).max(255).optional(),
      payload: z
        .object({
          summary: z.string().min(1).max(1024),
          source: z.string().min(1),
          severity: z.enum(['critical', 'error', 'warning', 'info']),
          timestamp: z.iso.datetime({ offset: true }).optional(),
          component: z.string().optional(),
          group: z.string().optional(),
          class: z.string().optional(),
          custom_details: z.record(z.string(), z.unknown()).optional(),
        })
        .strict(),
      images: z
        .array(
          z.object({ src: z.url({ protocol: /^https$/ }), href: url.optional(), alt: z.string().optional() }).strict(),
        )
        .optional(),
      links: z.array(z.object({ href: url, text: z.string().optional() }).strict()).optional(),
      client: z.string().optional(),
      client_url: url.optional(),
    })
    .strict(),
  z
    .object({
      routing_key: z.string().length(32),
      event_action: z.literal('acknowledge'),
      dedup_key: z.string().min(1).max(255),
    })
    .strict(),
  z
    .object({
      routing_key: z.string().length(32),
      event_action: z.literal('resolve'),
      dedup_key: z.string().min(1).max(255),
    })
    .strict(),
]);

const detailsTotal = (details: Record<string, string>) =>
  Object.entries(details).reduce((n, [k, v]) => n + [...k].length + [...v].length, 0);
const chars = (max: number) => z.string().refine((s) => [...s].length <= max, `at most ${max} characters`);

/** Opsgenie Alert API, POST /v2/alerts (create alert). */
export const opsgenieCreateAlert = z
  .object({
    message: chars(130).pipe(z.string().min(1)),
    alias: chars(512).optional(),
    description: chars(15_000).optional(),
    responders: z
      .array(z.object({ type: z.enum(['team', 'user', 'escalation', 'schedule']) }).passthrough())
      .optional(),
    visibleTo: z.array(z.object({ type: z.enum(['team', 'user']) }).passthrough()).optional(),
    actions: z.array(chars(50)).max(10).optional(),
    tags: z.array(chars(50)).max(20).optional(),
    details: z
      .record(z.string(), z.string())
      .refine((d) => detailsTotal(d) <= 8_000, 'details are at most 8000 characters in all')
      .optional(),
    entity: chars(512).optional(),
    source: chars(100).optional(),
    priority: z.enum(['P1', 'P2', 'P3', 'P4', 'P5']).optional(),
    user: chars(100).optional(),
    note: chars(25_000).optional(),
  })
  .strict();

/** Opsgenie Alert API, POST /v2/alerts/:identifier/close?identifierType=id|tiny|alias. */
export const opsgenieCloseAlert = z
  .object({ user: chars(100).optional(), source: chars(100).optional(), note: chars(25_000).optional() })
  .strict();

/**
 * A Slack incoming webhook's message: `text` in mrkdwn, where a bare &, < or > must be
 * escaped (&amp; &lt; &gt;) and < > appear only around a link (<https://...|label>).
 */
export const slackMessage = z
  .object({ text: z.string().min(1).max(40_000) })
  .strict()
  .refine(
    ({ text }) => !/[<>]/.test(text.replace(/<https?:\/\/[^\s|<>]+(\|[^<>]+)?>/g, '')),
    'an unescaped < or > outside a link',
  )
  .refine(({ text }) => !/&(?!(amp|lt|gt);)/.test(text), 'an unescaped &');

/** Keel's generic body. */
export const genericBody = z
  .object({
    id: z.string().regex(/^keel-event-\d+$/),
    type: z.enum(WEBHOOK_KINDS),
    createdAt: z.iso.datetime(),
    data: z.record(z.string(), z.unknown()),
    text: z.string().min(1),
  })
  .strict();

export interface ReceivedRequest {
  /** Which receiver took it: the first segment of the path. */
  receiver: 'generic' | 'slack' | 'pagerduty' | 'opsgenie' | 'unknown';
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  raw: string;
  body: unknown;
  /** Empty when the request is what the vendor accepts. */
  problems: string[];
  status: number;
}

const problemsOf = (result: { success: boolean; error?: z.ZodError }) =>
  result.success ? [] : result.error!.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`);

/**
 * One HTTP server with a receiver per format under its own path: `/generic/<name>`
 * (verified with the `standardwebhooks` package, with `secrets[name]`), `/slack/...`,
 * `/pagerduty/v2/enqueue`, `/opsgenie/v2/alerts[/<alias>/close]` (with `opsgenieKey`).
 */
export async function startFormatReceivers(options: {
  secrets: Record<string, string | Uint8Array>;
  secretFormat?: Record<string, 'raw'>;
  opsgenieKey?: string;
  /** Answer these statuses, in order, before checking (per receiver), to make a delivery fail. */
  answers?: Partial<Record<ReceivedRequest['receiver'], number[]>>;
}): Promise<{ server: Server; base: string; received: ReceivedRequest[]; close: () => Promise<void> }> {
  const received: ReceivedRequest[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const target = new URL(request.url ?? '/', 'http://receiver');
      const segments = target.pathname.split('/').filter(Boolean);
      const receiver =
        (['generic', 'slack', 'pagerduty', 'opsgenie'] as const).find((r) => r === segments[0]) ?? 'unknown';
      const problems: string[] = [];
      let body: unknown = null;
      try {
        body = JSON.parse(raw);
      } catch {
        problems.push('the body is not JSON');
      }
      if (request.method !== 'POST') problems.push(`method ${request.method}`);
      if (!String(request.headers['content-type'] ?? '').startsWith('application/json'))
        problems.push('content-type is not application/json');
      let status = 200;
      let answer: unknown = 'ok';
      switch (receiver) {
        case 'generic': {
          const name = segments[1] ?? '';
          const secret = options.secrets[name];
          try {
            if (secret === undefined) throw new Error(`no secret for ${name}`);
            new Webhook(secret, options.secretFormat?.[name] ? { format: 'raw' } : undefined).verify(
              raw,
              request.headers as Record<string, string>,
            );
          } catch (error) {
            problems.push(`signature: ${(error as Error).message}`);
          }
          problems.push(...problemsOf(genericBody.safeParse(body)));
          if ((body as { id?: unknown })?.id !== request.headers['webhook-id'])
            problems.push('webhook-id is not the body id');
          status = problems.length ? 401 : 204;
          answer = null;
          break;
        }
        case 'slack':
          problems.push(...problemsOf(slackMessage.safeParse(body)));
          status = problems.length ? 400 : 200;
          answer = problems.length ? 'invalid_payload' : 'ok';
          break;
        case 'pagerduty':
          if (target.pathname !== '/pagerduty/v2/enqueue') problems.push(`path ${target.pathname}`);
          problems.push(...problemsOf(pagerDutyEvent.safeParse(body)));
          status = problems.length ? 400 : 202;
          answer = problems.length
            ? { status: 'invalid event', message: 'Event object is invalid', errors: problems }
            : { status: 'success', message: 'Event processed', dedup_key: (body as { dedup_key?: string }).dedup_key };
          break;
        case 'opsgenie': {
          if (request.headers.authorization !== `GenieKey ${options.opsgenieKey}`)
            problems.push('authorization is not GenieKey <key>');
          const close = /^\/opsgenie\/v2\/alerts\/([^/]+)\/close$/.exec(target.pathname);
          if (close) {
            if (!['id', 'tiny', 'alias'].includes(target.searchParams.get('identifierType') ?? 'id'))
              problems.push('identifierType');
            problems.push(...problemsOf(opsgenieCloseAlert.safeParse(body)));
          } else if (target.pathname === '/opsgenie/v2/alerts') {
            problems.push(...problemsOf(opsgenieCreateAlert.safeParse(body)));
          } else {
            problems.push(`path ${target.pathname}`);
          }
          status = problems.some((p) => p.startsWith('authorization')) ? 401 : problems.length ? 422 : 202;
          answer = problems.length
            ? { message: problems.join('; '), took: 0.001, requestId: 'receiver' }
            : { result: 'Request will be processed', took: 0.002, requestId: 'receiver' };
          break;
        }
        case 'unknown':
          problems.push(`no receiver at ${target.pathname}`);
          status = 404;
      }
      const forced = options.answers?.[receiver]?.shift();
      if (forced !== undefined) status = forced;
      received.push({
        receiver,
        method: request.method ?? '',
        path: target.pathname,
        query: target.searchParams,
        headers: request.headers,
        raw,
        body,
        problems,
        status,
      });
      if (answer === null) response.writeHead(status).end();
      else if (typeof answer === 'string') response.writeHead(status, { 'content-type': 'text/plain' }).end(answer);
      else response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    server,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
