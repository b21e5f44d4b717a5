import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseWebhookSettings } from '../../lib/config/webhooks';
import { WEBHOOK_KINDS, webhookBody, webhookRetryDelayMs, webhookSignature } from '../../lib/domain/webhook';

describe('webhook deliveries', () => {
  it('signs `<timestamp>.<body>` with HMAC-SHA256, as docs/webhooks.md tells a receiver', () => {
    const expected = createHmac('sha256', 'a-secret').update('1800000000.{"a":1}').digest('hex');
    expect(webhookSignature('a-secret', 1_800_000_000, '{"a":1}')).toBe(`v1=${expected}`);
  });

  it('backs off from 5 s, doubling, capped at an hour', () => {
    expect([1, 2, 3, 4, 10, 11, 12, 40].map(webhookRetryDelayMs)).toEqual([5_000, 10_000, 20_000, 40_000, 2_560_000, 3_600_000, 3_600_000, 3_600_000]);
    expect(webhookRetryDelayMs(Number.NaN)).toBe(5_000);
  });

  it('builds the body with an absolute link and a one-line text for every kind', () => {
    const payload = { proposalId: 7, targetKind: 'batch', targetId: '42', proposer: 'operator', decider: 'approver', status: 'APPROVED', jobId: 3, itemCount: 10, processedCount: 10, reason: 'rpc', count: 60, threshold: 50, windowMinutes: 15, deadline: '2026-12-01T00:15:00.000Z', path: '/recovery/7' };
    for (const kind of WEBHOOK_KINDS) {
      const body = webhookBody({ id: 9, kind, createdAt: new Date('2026-12-01T00:00:00Z'), payload }, 'https://keel.example/base/');
      expect(body.id).toBe('keel-event-9');
      expect(body.data.url).toBe('https://keel.example/recovery/7');
      expect(body.data).not.toHaveProperty('path');
      expect(body.text).toMatch(/\S.* https:\/\/keel\.example\/recovery\/7$/);
      expect(body.text).not.toContain('?');
    }
    expect(webhookBody({ id: 1, kind: 'proposal.expired', createdAt: new Date(0), payload: { path: '/recovery/1' } }, undefined).data).toEqual({});
  });

  it('reads named endpoints and their secrets from the environment, refusing what it cannot use', () => {
    const errors: { name: string; message: string }[] = [];
    const settings = parseWebhookSettings(
      { KEEL_WEBHOOK_URLS: 'ops=https://chat.example/hooks/T0, on-call=http://127.0.0.1:9000/x', KEEL_WEBHOOK_SECRET_OPS: 's'.repeat(32), KEEL_WEBHOOK_SECRET_ON_CALL: 't'.repeat(40) },
      errors,
    );
    expect(errors).toEqual([]);
    expect(settings.endpoints.map((e) => e.name)).toEqual(['ops', 'on-call']);
    expect(settings).toMatchObject({ deadLetterThreshold: 50, deadLetterWindowMs: 900_000 });

    const refused: { name: string; message: string }[] = [];
    parseWebhookSettings(
      { KEEL_WEBHOOK_URLS: 'ops=https://a.example,Bad=https://b.example,ftp=ftp://c.example,short=https://d.example', KEEL_WEBHOOK_SECRET_SHORT: 'x', KEEL_DEAD_LETTER_ALERT_THRESHOLD: '0' },
      refused,
    );
    expect(refused.map((e) => e.name)).toEqual(['KEEL_WEBHOOK_SECRET_OPS', 'KEEL_WEBHOOK_URLS', 'KEEL_WEBHOOK_URLS', 'KEEL_WEBHOOK_SECRET_SHORT', 'KEEL_DEAD_LETTER_ALERT_THRESHOLD']);
    // A refusal never repeats a secret.
    expect(JSON.stringify(refused)).not.toContain('"x"');
  });
});
