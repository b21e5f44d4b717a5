import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { expect, test } from '@playwright/test';
import { verifyWebhook, WEBHOOK_HEADERS, type WebhookBody } from '../lib/domain/webhook';
import { expectNoSeriousViolations, useTheme } from './support/axe';
import { e2eDatabase } from './support/database';
import { E2E_WEBHOOK } from './support/server';
import { signIn } from './support/session';

interface Received {
  body: WebhookBody;
  verified: boolean;
}

/** A receiver on the port the e2e server posts to: it verifies every signature and keeps what came. */
async function startReceiver(): Promise<{ server: Server; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const verification = verifyWebhook(
        E2E_WEBHOOK.secret,
        { timestamp: request.headers[WEBHOOK_HEADERS.timestamp] as string, signature: request.headers[WEBHOOK_HEADERS.signature] as string },
        raw,
        Math.floor(Date.now() / 1000),
      );
      received.push({ body: JSON.parse(raw) as WebhookBody, verified: verification.ok });
      response.writeHead(verification.ok ? 204 : 401).end();
    });
  });
  server.listen(E2E_WEBHOOK.port, '127.0.0.1');
  await once(server, 'listening');
  return { server, received };
}

test('a proposal notifies the configured webhook, signed, and admins see the delivery', async ({ page }) => {
  const receiver = await startReceiver();
  const db = await e2eDatabase();
  try {
    // A proposal for an orchestration no page lists, cancelled again at the end.
    const { rows } = await db.query(`insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence, expected_fencing_token, successor_owner,
        proposer_id, proposer_login, proposer_note, wait_owner, wait_deadline, wait_cancellation_id)
      values ('orchestration', 'e2e-webhook-target', decode(repeat('ab', 32), 'hex'), '{}', 1, 'keel', 'u', 'operator', 'lease lapsed on host 7', 'p', now() + interval '15 minutes', 'c')
      returning id`);
    const id = Number(rows[0].id); // int8 arrives as a string from pg
    await expect.poll(() => receiver.received.filter((r) => r.body.data.proposalId === id).length, { timeout: 15_000 }).toBe(1);
    const [delivery] = receiver.received.filter((r) => r.body.data.proposalId === id);
    expect(delivery!.verified).toBe(true);
    expect(delivery!.body).toMatchObject({ type: 'proposal.created', data: { proposer: 'operator', note: 'lease lapsed on host 7', targetId: 'e2e-webhook-target' } });
    expect(delivery!.body.text).toContain(`/recovery/${id}`);

    await signIn(page, 'admin');
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await expect(page.getByRole('heading', { name: 'Webhooks', level: 1 })).toBeVisible();
    await expect(page.getByRole('region', { name: 'Webhook deliveries' })).toBeVisible();
    const row = page.getByRole('row').filter({ hasText: `proposal:${id}` });
    await expect(row).toContainText('proposal.created');
    await expect(row).toContainText('DELIVERED');
    await expect(row).toContainText('HTTP 204');
    await expect(page.getByText('http://127.0.0.1:' + E2E_WEBHOOK.port)).toBeVisible();

    await page.getByLabel('Status').selectOption('FAILED');
    await expect(page).toHaveURL(/status=FAILED/);
    await expect(page.getByText('No delivery has this status.')).toBeVisible();
    await page.getByLabel('Status').selectOption('');

    for (const theme of ['light', 'dark'] as const) {
      await useTheme(page, theme);
      await expect(row).toContainText('DELIVERED');
      await expectNoSeriousViolations(page);
      await page.screenshot({ path: `docs/screenshots/webhooks-${theme}.png` });
    }

    await db.query(`update keel.recovery_proposal set status = 'CANCELLED', decided_at = now(), decider_id = 'u', decider_login = 'operator' where id = $1`, [id]);
    await expect.poll(() => receiver.received.some((r) => r.body.type === 'proposal.cancelled' && r.body.data.proposalId === id), { timeout: 15_000 }).toBe(true);
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
