import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { parseWebhookSettings } from '../../lib/config/webhooks';
import {
  legacyWebhookSignature,
  standardWebhookSignature,
  WEBHOOK_KINDS,
  webhookBody,
  webhookRetryDelayMs,
  webhookSigningKey,
  type WebhookEvent,
} from '../../lib/domain/webhook';
import { WEBHOOK_FORMATS, webhookAlert, webhookRequest, type WebhookTarget } from '../../lib/domain/webhook-formats';
import {
  genericBody,
  opsgenieCloseAlert,
  opsgenieCreateAlert,
  pagerDutyEvent,
  slackMessage,
} from '../support/webhook-receivers';

const key = (secret: string) => {
  const result = webhookSigningKey(secret);
  if (!result.ok) throw new Error(result.error);
  return result.value;
};
const nowSeconds = () => Math.floor(Date.now() / 1000);
const headers = (id: string, timestamp: number, signature: string) => ({
  'webhook-id': id,
  'webhook-timestamp': String(timestamp),
  'webhook-signature': signature,
});

describe('Standard Webhooks signatures', () => {
  it("match the standardwebhooks library's own signing, on the library's test vector", () => {
    // The vector of the Standard Webhooks libraries' tests.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signature = standardWebhookSignature(
      key(secret),
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
      1_614_265_330,
      '{"test": 2432232314}',
    );
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(
      new Webhook(secret).sign('msg_p5jXN8AQM9LWM0D4loKWxJek', new Date(1_614_265_330_000), '{"test": 2432232314}'),
    ).toBe(signature);
  });

  it('verify with the library for a whsec_ secret, fail for another secret, a changed body or an old timestamp', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const body = '{"id":"keel-event-1","type":"webhook.test"}';
    const at = nowSeconds();
    const signed = headers('keel-event-1', at, standardWebhookSignature(key(secret), 'keel-event-1', at, body));
    expect(new Webhook(secret).verify(body, signed)).toEqual({ id: 'keel-event-1', type: 'webhook.test' });
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 8).toString('base64')}`).verify(body, signed)).toThrow(
      'No matching signature found',
    );
    expect(() => new Webhook(secret).verify(`${body} `, signed)).toThrow('No matching signature found');
    expect(() => new Webhook(secret).verify(body, { ...signed, 'webhook-id': 'keel-event-2' })).toThrow(
      'No matching signature found',
    );
    const old = at - 301;
    expect(() =>
      new Webhook(secret).verify(
        body,
        headers('keel-event-1', old, standardWebhookSignature(key(secret), 'keel-event-1', old, body)),
      ),
    ).toThrow('Message timestamp too old');
  });

  it("key a plain secret with its UTF-8 bytes: the library's raw format verifies it, as do they as whsec_", () => {
    const ascii = 'e2e-webhook-secret-5b1d7c2e9f8a4b6c3d0e';
    const body = '{"a":1}';
    const at = nowSeconds();
    const signed = headers('keel-event-9', at, standardWebhookSignature(key(ascii), 'keel-event-9', at, body));
    expect(new Webhook(ascii, { format: 'raw' }).verify(body, signed)).toEqual({ a: 1 });
    expect(new Webhook(`whsec_${Buffer.from(ascii, 'utf8').toString('base64')}`).verify(body, signed)).toEqual({
      a: 1,
    });
    // Without the raw format the library reads a plain secret as base64: it does not verify.
    expect(() => new Webhook(ascii).verify(body, signed)).toThrow();

    // Past ASCII the library's raw string form takes UTF-16 code units, not UTF-8: pass the bytes.
    const accented = 'clé-secrète-de-keel-pour-les-webhooks-ü';
    const accentedSigned = headers(
      'keel-event-9',
      at,
      standardWebhookSignature(key(accented), 'keel-event-9', at, body),
    );
    expect(new Webhook(new TextEncoder().encode(accented), { format: 'raw' }).verify(body, accentedSigned)).toEqual({
      a: 1,
    });
    expect(() => new Webhook(accented, { format: 'raw' }).verify(body, accentedSigned)).toThrow(
      'No matching signature found',
    );
  });

  it("keep Keel's earlier header signature, the hex HMAC of `<timestamp>.<body>` with the same key", () => {
    const secret = 'a-secret-of-thirty-two-characters!';
    const expected = createHmac('sha256', secret).update('1800000000.{"a":1}').digest('hex');
    expect(legacyWebhookSignature(key(secret), 1_800_000_000, '{"a":1}')).toBe(`v1=${expected}`);
  });

  it('refuse secrets they cannot use, without repeating them', () => {
    expect(webhookSigningKey('whsec_not*base64')).toEqual({
      ok: false,
      error: expect.stringContaining('standard base64'),
    });
    expect(webhookSigningKey(`whsec_${Buffer.alloc(16).toString('base64')}`)).toEqual({
      ok: false,
      error: expect.stringContaining('decodes to 16'),
    });
    expect(webhookSigningKey(`whsec_${Buffer.alloc(65).toString('base64')}`)).toEqual({
      ok: false,
      error: expect.stringContaining('decodes to 65'),
    });
    expect(webhookSigningKey('short')).toEqual({ ok: false, error: expect.stringContaining('32 or more') });
    expect(JSON.stringify(webhookSigningKey('whsec_not*base64'))).not.toContain('not*base64');
  });
});

describe('webhook deliveries', () => {
  it('back off from 5 s, doubling, capped at an hour', () => {
    expect([1, 2, 3, 4, 10, 11, 12, 40].map(webhookRetryDelayMs)).toEqual([
      5_000, 10_000, 20_000, 40_000, 2_560_000, 3_600_000, 3_600_000, 3_600_000,
    ]);
    expect(webhookRetryDelayMs(Number.NaN)).toBe(5_000);
  });

  it('build the generic body with an absolute link and a one-line text for every kind', () => {
    const payload = {
      proposalId: 7,
      targetKind: 'batch',
      targetId: '42',
      proposer: 'operator',
      decider: 'approver',
      status: 'APPROVED',
      jobId: 3,
      itemCount: 10,
      processedCount: 10,
      reason: 'rpc',
      count: 60,
      threshold: 50,
      windowMinutes: 15,
      deadline: '2026-12-01T00:15:00.000Z',
      endpoint: 'ops',
      requestedBy: 'admin',
      path: '/recovery/7',
    };
    for (const kind of WEBHOOK_KINDS) {
      const body = webhookBody(
        { id: 9, kind, createdAt: new Date('2026-12-01T00:00:00Z'), payload },
        'https://keel.example/base/',
      );
      expect(genericBody.safeParse(body).success).toBe(true);
      expect(body.id).toBe('keel-event-9');
      expect(body.data.url).toBe('https://keel.example/recovery/7');
      expect(body.data).not.toHaveProperty('path');
      expect(body.text).toMatch(/\S.* https:\/\/keel\.example\/recovery\/7$/);
      expect(body.text).not.toContain('?');
    }
    expect(
      webhookBody(
        { id: 1, kind: 'proposal.expired', createdAt: new Date(0), payload: { path: '/recovery/1' } },
        undefined,
      ).data,
    ).toEqual({});
  });
});

describe('webhook formats', () => {
  const targets: Record<(typeof WEBHOOK_FORMATS)[number], WebhookTarget> = {
    generic: { url: 'https://hooks.example/keel', format: 'generic' },
    slack: { url: 'https://hooks.slack.com/services/T0/B0/x', format: 'slack' },
    pagerduty: { url: 'https://events.pagerduty.com/v2/enqueue', format: 'pagerduty', routingKey: 'R'.repeat(32) },
    opsgenie: {
      url: 'https://api.opsgenie.com/v2/alerts',
      format: 'opsgenie',
      apiKey: 'eb243592-faa2-4ba2-a551-1afdf565c889',
    },
  };
  // Free text at its bounds (notes and reasons are cut to 280 in the database) and markup a note might carry.
  const note = `<!channel> & <https://evil.example|click> ${'n'.repeat(260)}`;
  const event = (kind: (typeof WEBHOOK_KINDS)[number], id = 41): WebhookEvent => ({
    id,
    kind,
    createdAt: new Date('2026-12-01T09:12:03.123Z'),
    payload: {
      proposalId: 17,
      proposalKind: 'TAKEOVER',
      status: 'APPROVED',
      targetKind: 'batch',
      targetId: '1042',
      proposer: 'operator',
      note,
      decider: 'approver',
      reason: note,
      jobId: 3,
      itemCount: 2,
      processedCount: 2,
      results: { replayed: 2 },
      count: 60,
      threshold: 50,
      windowMinutes: 15,
      endpoint: 'ops',
      requestedBy: 'admin',
      path: '/recovery/17',
    },
  });

  it("make every kind of event a request each vendor's published schema accepts", () => {
    for (const kind of WEBHOOK_KINDS) {
      for (const format of WEBHOOK_FORMATS) {
        const request = webhookRequest(event(kind), targets[format], 'https://keel.example');
        const body = JSON.parse(request.body);
        const schema = {
          generic: genericBody,
          slack: slackMessage,
          pagerduty: pagerDutyEvent,
          opsgenie: request.url.endsWith('/alerts') ? opsgenieCreateAlert : opsgenieCloseAlert,
        }[format];
        const parsed = schema.safeParse(body);
        expect(parsed.error?.issues ?? [], `${kind} as ${format}`).toEqual([]);
        expect(request.headers['content-type']).toBe('application/json');
      }
    }
  });

  it('open an alert when a proposal waits, and close that same alert on any decision', () => {
    const opened = webhookRequest(event('proposal.created'), targets.pagerduty, undefined);
    const resolved = webhookRequest(event('proposal.expired'), targets.pagerduty, undefined);
    expect(JSON.parse(opened.body)).toMatchObject({
      event_action: 'trigger',
      dedup_key: 'keel-proposal-17',
      payload: { severity: 'warning', source: 'keel', component: 'batch' },
    });
    expect(JSON.parse(resolved.body)).toEqual({
      routing_key: 'R'.repeat(32),
      event_action: 'resolve',
      dedup_key: 'keel-proposal-17',
    });

    const created = webhookRequest(event('proposal.created'), targets.opsgenie, 'https://keel.example');
    const closed = webhookRequest(event('proposal.decided'), targets.opsgenie, 'https://keel.example');
    expect(created.url).toBe('https://api.opsgenie.com/v2/alerts');
    expect(created.headers.authorization).toBe('GenieKey eb243592-faa2-4ba2-a551-1afdf565c889');
    expect(JSON.parse(created.body)).toMatchObject({
      alias: 'keel-proposal-17',
      priority: 'P3',
      tags: ['keel', 'proposal.created'],
    });
    expect([...JSON.parse(created.body).message]).toHaveLength(130);
    expect(closed.url).toBe('https://api.opsgenie.com/v2/alerts/keel-proposal-17/close?identifierType=alias');
    expect(closed.headers.authorization).toBe(created.headers.authorization);

    expect(webhookAlert(event('dead_letters.rising'))).toMatchObject({
      action: 'open',
      key: expect.stringMatching(/^keel-dead-letters-[0-9a-f]{32}$/),
      severity: 'error',
      priority: 'P2',
    });
    expect(webhookAlert({ id: 1, kind: 'dead_letters.rising', payload: { reason: 'rpc' } }).key).toBe(
      'keel-dead-letters-rpc',
    );
    expect(webhookAlert({ id: 5, kind: 'webhook.test', payload: {} })).toMatchObject({
      action: 'open',
      key: 'keel-test-5',
      severity: 'info',
      priority: 'P5',
    });
  });

  it("escape a note's markup for Slack, so it cannot mention a channel or forge a link", () => {
    const { text } = JSON.parse(webhookRequest(event('proposal.created'), targets.slack, 'https://keel.example').body);
    expect(text).toContain('&lt;!channel&gt; &amp; &lt;https://evil.example|click&gt;');
    expect(text.endsWith(' <https://keel.example/recovery/17|Open in Keel>')).toBe(true);
  });
});

describe('webhook settings', () => {
  const secret = 's'.repeat(32);

  it('read named endpoints, their formats, secrets and keys from the environment', () => {
    const errors: { name: string; message: string }[] = [];
    const settings = parseWebhookSettings(
      {
        KEEL_WEBHOOK_URLS:
          'ops=https://chat.example/hooks/T0, on-call=http://127.0.0.1:9000/x,' +
          'chat=https://hooks.slack.com/services/T/B/x,pd=https://events.pagerduty.com/v2/enqueue,' +
          'og=https://api.eu.opsgenie.com/v2/alerts',
        KEEL_WEBHOOK_SECRET_OPS: secret,
        KEEL_WEBHOOK_SECRET_ON_CALL: `whsec_${Buffer.alloc(24, 1).toString('base64')}`,
        KEEL_WEBHOOK_FORMAT_CHAT: 'slack',
        KEEL_WEBHOOK_FORMAT_PD: 'pagerduty',
        KEEL_WEBHOOK_ROUTING_KEY_PD: 'a'.repeat(32),
        KEEL_WEBHOOK_FORMAT_OG: 'opsgenie',
        KEEL_WEBHOOK_API_KEY_OG: 'eb243592-faa2-4ba2-a551-1afdf565c889',
      },
      errors,
    );
    expect(errors).toEqual([]);
    expect(settings.endpoints.map((e) => [e.name, e.format, e.secret !== null, e.routingKey, e.apiKey])).toEqual([
      ['ops', 'generic', true, null, null],
      ['on-call', 'generic', true, null, null],
      ['chat', 'slack', false, null, null],
      ['pd', 'pagerduty', false, 'a'.repeat(32), null],
      ['og', 'opsgenie', false, null, 'eb243592-faa2-4ba2-a551-1afdf565c889'],
    ]);
    expect(settings).toMatchObject({ deadLetterThreshold: 50, deadLetterWindowMs: 900_000 });
  });

  it('refuse at start what they cannot use, naming the setting and never its value', () => {
    const refused: { name: string; message: string }[] = [];
    parseWebhookSettings(
      {
        KEEL_WEBHOOK_URLS:
          'ops=https://a.example,Bad=https://b.example,ftp=ftp://c.example,short=https://d.example,' +
          'pd=https://e.example,og=https://f.example,wh=https://g.example',
        KEEL_WEBHOOK_SECRET_SHORT: 'x',
        KEEL_WEBHOOK_FORMAT_PD: 'pagerduty',
        KEEL_WEBHOOK_ROUTING_KEY_OG: 'k'.repeat(32),
        KEEL_WEBHOOK_FORMAT_OG: 'opsgenie',
        KEEL_WEBHOOK_SECRET_WH: 'whsec_c2VjcmV0',
        KEEL_WEBHOOK_FORMAT_NOBODY: 'slack',
        KEEL_DEAD_LETTER_ALERT_THRESHOLD: '0',
      },
      refused,
    );
    // A field's own refusal (the threshold) comes first, then the endpoints' in the order they are named.
    expect(refused.map((e) => e.name)).toEqual([
      'KEEL_DEAD_LETTER_ALERT_THRESHOLD',
      'KEEL_WEBHOOK_SECRET_OPS',
      'KEEL_WEBHOOK_URLS',
      'KEEL_WEBHOOK_URLS',
      'KEEL_WEBHOOK_SECRET_SHORT',
      'KEEL_WEBHOOK_ROUTING_KEY_PD',
      'KEEL_WEBHOOK_ROUTING_KEY_OG',
      'KEEL_WEBHOOK_API_KEY_OG',
      'KEEL_WEBHOOK_SECRET_WH',
      'KEEL_WEBHOOK_FORMAT_NOBODY',
    ]);
    expect(refused.find((e) => e.name === 'KEEL_WEBHOOK_ROUTING_KEY_PD')?.message).toBe(
      'KEEL_WEBHOOK_ROUTING_KEY_PD must be set: pd is a PagerDuty endpoint (its Events API v2 integration key)',
    );
    expect(refused.find((e) => e.name === 'KEEL_WEBHOOK_SECRET_WH')?.message).toContain('decodes to 6');
    const json = JSON.stringify(refused);
    expect(json).not.toContain('"x"');
    expect(json).not.toContain('k'.repeat(32));
    expect(json).not.toContain('c2VjcmV0');

    const unknownFormat: { name: string; message: string }[] = [];
    parseWebhookSettings(
      { KEEL_WEBHOOK_URLS: 'ops=https://a.example', KEEL_WEBHOOK_SECRET_OPS: secret, KEEL_WEBHOOK_FORMAT_OPS: 'teams' },
      unknownFormat,
    );
    expect(unknownFormat).toEqual([
      {
        name: 'KEEL_WEBHOOK_FORMAT_OPS',
        message: 'KEEL_WEBHOOK_FORMAT_OPS=teams is not a format: use one of generic, slack, pagerduty, opsgenie',
      },
    ]);
  });
});
