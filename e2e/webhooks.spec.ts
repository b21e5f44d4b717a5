import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { expect, test, type Page } from '@playwright/test';
import { Webhook } from 'standardwebhooks';
import type { WebhookBody } from '../lib/domain/webhook';
import { expectNoSeriousViolations, useTheme } from './support/axe';
import { e2eDatabase } from './support/database';
import { E2E_WEBHOOK } from './support/server';
import { signIn, toast } from './support/session';
import { captureScreenshot } from './support/screenshots';

interface Received {
  body: WebhookBody;
  headers: IncomingHttpHeaders;
  verified: boolean;
  status: number;
}

/**
 * A receiver on the port the e2e server posts to: it verifies every signature with the
 * standardwebhooks package (the endpoint's plain secret as its UTF-8 bytes, the library's
 * raw format) and keeps what came. `refuse` picks requests to answer 503.
 */
async function startReceiver(
  refuse: (body: WebhookBody) => boolean = () => false,
): Promise<{ server: Server; received: Received[] }> {
  const received: Received[] = [];
  const verifier = new Webhook(new TextEncoder().encode(E2E_WEBHOOK.secret), { format: 'raw' });
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let verified = true;
      try {
        verifier.verify(raw, request.headers as Record<string, string>);
      } catch {
        verified = false;
      }
      const body = JSON.parse(raw) as WebhookBody;
      const status = !verified ? 401 : refuse(body) ? 503 : 204;
      received.push({ body, headers: request.headers, verified, status });
      response.writeHead(status).end();
    });
  });
  server.listen(E2E_WEBHOOK.port, '127.0.0.1');
  await once(server, 'listening');
  return { server, received };
}

/** A proposal for an orchestration no page lists (one per test: a target has one pending proposal at most). */
async function insertProposal(
  db: Awaited<ReturnType<typeof e2eDatabase>>,
  target: string,
  note: string,
): Promise<number> {
  const { rows } = await db.query(
    `insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence, expected_fencing_token,
     successor_owner,
      proposer_id, proposer_login, proposer_note, wait_owner, wait_deadline, wait_cancellation_id)
    values ('orchestration', $1, decode(repeat('ab', 32), 'hex'), '{}', 1, 'keel', 'u', 'operator', $2, 'p', now() +
    interval '15 minutes', 'c')
    returning id`,
    [target, note],
  );
  return Number(rows[0].id); // int8 arrives as a string from pg
}

async function openWebhooks(page: Page) {
  await signIn(page, 'admin');
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await expect(page.getByRole('heading', { name: 'Webhooks', level: 1 })).toBeVisible();
  await expect(page.getByRole('region', { name: 'Webhook deliveries' })).toBeVisible();
}

test('a proposal notifies the configured webhook, signed, and admins see the delivery', async ({ page }) => {
  const receiver = await startReceiver();
  const db = await e2eDatabase();
  try {
    const id = await insertProposal(db, 'e2e-webhook-target', 'lease lapsed on host 7');
    await expect
      .poll(() => receiver.received.filter((r) => r.body.data.proposalId === id).length, { timeout: 15_000 })
      .toBe(1);
    const [delivery] = receiver.received.filter((r) => r.body.data.proposalId === id);
    expect(delivery!.verified).toBe(true);
    expect(delivery!.headers['webhook-id']).toBe(delivery!.body.id);
    expect(delivery!.body).toMatchObject({
      type: 'proposal.created',
      data: { proposer: 'operator', note: 'lease lapsed on host 7', targetId: 'e2e-webhook-target' },
    });
    expect(delivery!.body.text).toContain(`/recovery/${id}`);

    // A 1440 px screen shows every column of the deliveries without scrolling sideways, with
    // the widest row the page shows: a retry due in an hour after a network error, Retry now.
    const { rows: wide } = await db.query(
      `with event as (
        insert into keel.webhook_event (kind, subject, payload)
        values ('dead_letters.rising', 'dead_letters:ledger_rpc_timeout', '{}') returning id)
      insert into keel.webhook_delivery (event_id, endpoint, attempts, next_attempt_at, last_error)
      select id, $1, 11, now() + interval '59 minutes', 'network error ECONNREFUSED' from event returning id`,
      [E2E_WEBHOOK.name],
    );
    await page.setViewportSize({ width: 1440, height: 900 });
    await openWebhooks(page);
    await expect(page.getByRole('button', { name: `Retry delivery ${wide[0].id} now` })).toBeVisible();
    const row = page.getByRole('row').filter({ hasText: `proposal:${id}` });
    await expect(row).toContainText('proposal.created');
    await expect(row).toContainText('DELIVERED');
    await expect(row).toContainText('HTTP 204');
    await expect(page.getByText(`http://127.0.0.1:${E2E_WEBHOOK.port}`)).toBeVisible();
    const table = page.getByRole('region', { name: 'Webhook deliveries' });
    const overflow = await table.evaluate((box) => box.scrollWidth - box.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    const lastHeader = await page.getByRole('columnheader', { name: 'Action' }).boundingBox();
    const region = await table.boundingBox();
    expect(lastHeader!.x + lastHeader!.width).toBeLessThanOrEqual(region!.x + region!.width);

    await page.getByLabel('Status').selectOption('FAILED');
    await expect(page).toHaveURL(/status=FAILED/);
    await page.getByLabel('Status').selectOption('');

    for (const theme of ['light', 'dark'] as const) {
      await useTheme(page, theme);
      await expect(row).toContainText('DELIVERED');
      await expectNoSeriousViolations(page);
      await captureScreenshot(page, `webhooks-${theme}`);
    }

    await db.query(`update keel.webhook_delivery set status = 'FAILED', attempts = 12 where id = $1`, [wide[0].id]);
    await db.query(
      `update keel.recovery_proposal set status = 'CANCELLED', decided_at = now(), decider_id = 'u', decider_login =
       'operator' where id = $1`,
      [id],
    );
    await expect
      .poll(
        () => receiver.received.some((r) => r.body.type === 'proposal.cancelled' && r.body.data.proposalId === id),
        { timeout: 15_000 },
      )
      .toBe(true);
  } finally {
    await db.end();
    receiver.server.close();
  }
});

test('Send test posts one signed test event per press, even on a double click, and is audited', async ({ page }) => {
  const receiver = await startReceiver();
  const db = await e2eDatabase();
  try {
    const auditedBefore = Number(
      (await db.query(`select count(*) as n from keel.audit_event where action = 'webhook.send_test'`)).rows[0].n,
    );
    await openWebhooks(page);
    await page.getByRole('button', { name: `Send test to ${E2E_WEBHOOK.name}` }).dblclick();
    await expect(toast(page)).toContainText(`Test to ${E2E_WEBHOOK.name}: delivered, HTTP 204`);
    const tests = () => receiver.received.filter((r) => r.body.type === 'webhook.test');
    expect(tests()).toHaveLength(1);
    expect(tests()[0]).toMatchObject({
      verified: true,
      body: { data: { endpoint: E2E_WEBHOOK.name, requestedBy: 'admin' } },
    });
    const row = page.getByRole('row').filter({ hasText: 'webhook.test' }).first();
    await expect(row).toContainText('DELIVERED');
    await expect(row).toContainText(`endpoint:${E2E_WEBHOOK.name}`);

    // Exactly one audit event for the double click, by admin, with the operation id of the press.
    const { rows } = await db.query(
      `select actor_login, outcome, target_id, operation_id, after from keel.audit_event
       where action = 'webhook.send_test' order by id`,
    );
    expect(rows).toHaveLength(auditedBefore + 1);
    const [event] = rows.slice(-1);
    expect(event).toMatchObject({
      actor_login: 'admin',
      outcome: 'APPLIED',
      target_id: E2E_WEBHOOK.name,
      operation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(tests()[0]!.body.id).toBe(`keel-event-${event.after.eventId}`);

    await page.goto('/audit?action=webhook.send_test');
    const audited = page.getByRole('table', { name: 'Audit events' }).locator('tbody tr[data-audit-id]').first();
    await expect(audited).toContainText('admin');
    await expect(audited).toContainText('APPLIED');
  } finally {
    await db.end();
    receiver.server.close();
  }
});

test('Retry now sends a failed delivery again with the same webhook-id, and is audited', async ({ page }) => {
  let accept = false;
  const note = 'retry now target';
  const receiver = await startReceiver((body) => body.data.note === note && !accept);
  const db = await e2eDatabase();
  try {
    const id = await insertProposal(db, 'e2e-webhook-retry-target', note);
    // The receiver refuses it once; then its retries run out (as after 12 refusals), so only an admin sends it again.
    await expect
      .poll(
        async () =>
          (
            await db.query(
              `update keel.webhook_delivery d set status = 'FAILED', attempts = 12 from keel.webhook_event e
              where e.id = d.event_id and e.subject = $1 and d.status = 'PENDING' and d.attempts = 1
              and d.lease_until is null`,
              [`proposal:${id}`],
            )
          ).rowCount,
        { timeout: 15_000 },
      )
      .toBe(1);
    const [{ id: deliveryId, event_id: eventId }] = (
      await db.query(
        `select d.id, d.event_id from keel.webhook_delivery d join keel.webhook_event e on e.id = d.event_id
         where e.subject = $1`,
        [`proposal:${id}`],
      )
    ).rows;
    accept = true;

    await openWebhooks(page);
    const row = page.getByRole('row').filter({ hasText: `proposal:${id}` });
    await expect(row).toContainText('FAILED');
    await expect(row).toContainText('HTTP 503');
    await row.getByRole('button', { name: `Retry delivery ${deliveryId} now` }).click();
    await expect(toast(page)).toContainText(`Delivery #${deliveryId}: delivered, HTTP 204`);
    await expect(row).toContainText('DELIVERED');
    await expect(row.getByRole('button', { name: /Retry/ })).toHaveCount(0);

    const sent = receiver.received.filter((r) => r.body.data.note === note);
    expect(sent.map((r) => [r.headers['webhook-id'], r.status, r.verified])).toEqual([
      [`keel-event-${eventId}`, 503, true],
      [`keel-event-${eventId}`, 204, true],
    ]);
    const { rows } = await db.query(
      `select actor_login, outcome, target_kind, target_id, before, operation_id from keel.audit_event
       where action = 'webhook.retry' order by id desc limit 1`,
    );
    expect(rows[0]).toMatchObject({
      actor_login: 'admin',
      outcome: 'APPLIED',
      target_kind: 'webhook_delivery',
      target_id: String(deliveryId),
      before: { status: 'FAILED', attempts: 12, lastHttpStatus: 503, lastError: 'HTTP 503' },
      operation_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    await page.goto(`/audit?action=webhook.retry&targetKind=webhook_delivery&targetId=${deliveryId}`);
    const audited = page.getByRole('table', { name: 'Audit events' }).locator('tbody tr[data-audit-id]');
    await expect(audited).toHaveCount(1);
    await expect(audited).toContainText('APPLIED');

    await db.query(
      `update keel.recovery_proposal set status = 'CANCELLED', decided_at = now(), decider_id = 'u', decider_login =
       'operator' where id = $1`,
      [id],
    );
  } finally {
    await db.end();
    receiver.server.close();
  }
});

test('the webhooks page and its API are for admins only', async ({ page }) => {
  await signIn(page, 'support');
  await expect(page.getByRole('link', { name: 'Webhooks' })).toHaveCount(0);
  const response = await page.goto('/webhooks');
  expect(response?.status()).toBe(403);
  await expect(page.getByRole('heading', { name: 'Admins only' })).toBeVisible();
  await expect(page.getByRole('table')).toHaveCount(0);
  const api = await page.request.get('/api/webhooks/deliveries');
  expect(api.status()).toBe(403);
});
