import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresWebhookUnitOfWork } from '../../lib/adapters/webhook-deliveries';
import { httpWebhookSender } from '../../lib/adapters/webhook-sender';
import { parseWebhookSettings, type WebhookEndpointSetting } from '../../lib/config/webhooks';
import type { Actor } from '../../lib/domain/actor';
import { WEBHOOK_MAX_ATTEMPTS, type WebhookBody } from '../../lib/domain/webhook';
import { retryWebhookDelivery, sendTestWebhook, type WebhookAdminPorts } from '../../lib/services/webhook-admin';
import { checkDeadLetterRise, deliverDueWebhooks, syncWebhookEndpoints } from '../../lib/workers/webhook-worker';
import { freshDatabase } from '../support/database';
import { startFormatReceivers } from '../support/webhook-receivers';

const { pool, db, url } = await freshDatabase();

// One endpoint with a Standard Webhooks secret, one with a plain secret of Keel's earlier form.
const SECRETS = { ops: `whsec_${Buffer.alloc(32, 0x6f).toString('base64')}`, pager: 'p'.repeat(40) };

interface Received {
  endpoint: string;
  body: WebhookBody;
  headers: IncomingHttpHeaders;
  verified: boolean;
  status: number;
}

/**
 * Verifies as a receiver would, with the standardwebhooks
 * package: a whsec_ secret as is, a plain one as its UTF-8 bytes.
 */
function verifies(endpoint: keyof typeof SECRETS, raw: string, headers: IncomingHttpHeaders): boolean {
  const secret = SECRETS[endpoint];
  const webhook = secret.startsWith('whsec_')
    ? new Webhook(secret)
    : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  try {
    webhook.verify(raw, headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

/**
 * A receiver as a team would write one: it verifies the signature
 * with the standardwebhooks package and answers as told.
 */
function startReceiver() {
  const received: Received[] = [];
  const answers: Record<string, number[]> = { ops: [], pager: [] };
  let stallNext: ((held: { request: IncomingMessage; response: ServerResponse }) => void) | null = null;
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const endpoint = request.url!.slice(1) as keyof typeof SECRETS;
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (stallNext) {
        // Hold the request open without answering: the sender is killed meanwhile.
        const stalled = stallNext;
        stallNext = null;
        stalled({ request, response });
        return;
      }
      const verified = verifies(endpoint, raw, request.headers);
      const status = !verified ? 401 : (answers[endpoint]!.shift() ?? 200);
      received.push({ endpoint, body: JSON.parse(raw), headers: request.headers, verified, status });
      response.writeHead(status).end();
    });
  });
  return {
    server,
    received,
    answers,
    stallNextRequest: () =>
      new Promise<{ request: IncomingMessage; response: ServerResponse }>((resolve) => (stallNext = resolve)),
    /** Deliveries a receiver accepts, counted once per id as a receiver that drops repeats would. */
    accepted: (endpoint: string) =>
      received.filter((r) => r.endpoint === endpoint && r.verified && r.status === 200).map((r) => r.body.id),
  };
}

const receiver = startReceiver();
let endpoints: WebhookEndpointSetting[] = [];

beforeAll(async () => {
  receiver.server.listen(0, '127.0.0.1');
  await once(receiver.server, 'listening');
  const base = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}`;
  const errors: { name: string; message: string }[] = [];
  const settings = parseWebhookSettings(
    {
      KEEL_WEBHOOK_URLS: `ops=${base}/ops,pager=${base}/pager`,
      KEEL_WEBHOOK_SECRET_OPS: SECRETS.ops,
      KEEL_WEBHOOK_SECRET_PAGER: SECRETS.pager,
    },
    errors,
  );
  expect(errors).toEqual([]);
  endpoints = settings.endpoints;
  await syncWebhookEndpoints(db, endpoints);
});
afterAll(() => receiver.server.close());

async function proposal(note: string): Promise<number> {
  const { rows } = await pool.query(
    `insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence, expected_version,
     proposer_id, proposer_login, proposer_note,
       wait_owner, wait_deadline, wait_cancellation_id)
     values ('batch', $1, decode(repeat('ab', 32), 'hex'),
     '{"ownerToken":"never-sent"}', 1, 'u1', 'operator', $2, 'p', now() + interval '15 minutes', 'c')
     returning id`,
    [String(Math.floor(Math.random() * 1e9)), note],
  );
  return rows[0].id;
}

const deliveries = async (eventKind: string) =>
  (
    await pool.query(
      `select d.endpoint, d.status, d.attempts, d.last_error as "lastError" from keel.webhook_delivery d
                      join keel.webhook_event e on e.id = d.event_id where e.kind = $1 order by d.endpoint`,
      [eventKind],
    )
  ).rows;

describe('outgoing webhooks', () => {
  it('writes an event and a delivery per endpoint in the change’s transaction, none if it rolls back', async () => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(`insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence,
                          expected_version, proposer_id, proposer_login,
        wait_owner, wait_deadline, wait_cancellation_id)
        values ('batch', 'rolled-back', decode(repeat('ab', 32), 'hex'), '{}', 1, 'u1', 'operator', 'p', now(), 'c')`);
      await client.query('rollback');
    } finally {
      client.release();
    }
    expect((await pool.query(`select count(*)::int as n from keel.webhook_event`)).rows[0].n).toBe(0);

    const id = await proposal('worker host lost its disk');
    expect(await deliveries('proposal.created')).toEqual([
      { endpoint: 'ops', status: 'PENDING', attempts: 0, lastError: null },
      { endpoint: 'pager', status: 'PENDING', attempts: 0, lastError: null },
    ]);
    const [event] = (await pool.query(`select payload from keel.webhook_event where subject = $1`, [`proposal:${id}`]))
      .rows;
    expect(event.payload).toMatchObject({
      proposalId: id,
      proposer: 'operator',
      note: 'worker host lost its disk',
      path: `/recovery/${id}`,
    });
    expect(JSON.stringify(event.payload)).not.toContain('never-sent');
  });

  it('signs each delivery, retries a refused one with backoff; a restart mid-retry delivers it once', async () => {
    receiver.answers.ops!.push(500);
    const first = await deliverDueWebhooks(db, { endpoints, baseUrl: 'https://keel.example' });
    expect(first).toEqual({ delivered: 1, retried: 1, failed: 0 });
    expect(await deliveries('proposal.created')).toEqual([
      { endpoint: 'ops', status: 'PENDING', attempts: 1, lastError: 'HTTP 500' },
      { endpoint: 'pager', status: 'DELIVERED', attempts: 1, lastError: null },
    ]);
    const retryIn = (
      await pool.query(
        `select extract(epoch from next_attempt_at - clock_timestamp())::float8 as s from keel.webhook_delivery
         where endpoint = 'ops'`,
      )
    ).rows[0].s;
    expect(retryIn).toBeGreaterThan(3);
    expect(retryIn).toBeLessThanOrEqual(5);
    // Nothing is due until the backoff has passed.
    expect(await deliverDueWebhooks(db, { endpoints, baseUrl: undefined })).toEqual({
      delivered: 0,
      retried: 0,
      failed: 0,
    });

    // The backoff passes; a worker process takes the retry and is killed while the receiver holds it open.
    await pool.query(`update keel.webhook_delivery set next_attempt_at = clock_timestamp() where endpoint = 'ops'`);
    const env = {
      ...process.env,
      DATABASE_URL: url,
      KEEL_WEBHOOK_URLS: endpoints.map((e) => `${e.name}=${e.url}`).join(','),
      KEEL_WEBHOOK_SECRET_OPS: SECRETS.ops,
      KEEL_WEBHOOK_SECRET_PAGER: SECRETS.pager,
    };
    const startWorker = (): ChildProcess =>
      spawn(
        process.execPath,
        ['--import', 'tsx', '--conditions=react-server', 'test/support/webhook-worker-process.ts'],
        { env, stdio: ['ignore', 'pipe', 'inherit'] },
      );
    const stalled = receiver.stallNextRequest();
    const doomed = startWorker();
    await stalled;
    doomed.kill('SIGKILL');
    await once(doomed, 'exit');
    // Its lease still holds the delivery; once the lease lapses, the next Keel process takes it.
    expect(
      (
        await pool.query(
          `select attempts, lease_until > clock_timestamp() as leased from keel.webhook_delivery
           where endpoint = 'ops'`,
        )
      ).rows[0],
    ).toEqual({ attempts: 1, leased: true });
    await pool.query(`update keel.webhook_delivery set lease_until = clock_timestamp() where endpoint = 'ops'`);
    const successor = startWorker();
    try {
      while ((await deliveries('proposal.created'))[0].status !== 'DELIVERED')
        await new Promise((resolve) => setImmediate(resolve));
    } finally {
      successor.kill('SIGTERM');
      await once(successor, 'exit');
    }
    expect(await deliveries('proposal.created')).toEqual([
      { endpoint: 'ops', status: 'DELIVERED', attempts: 2, lastError: null },
      { endpoint: 'pager', status: 'DELIVERED', attempts: 1, lastError: null },
    ]);
    // Each endpoint accepted the event exactly once, every request carried a valid signature.
    const eventId = (await pool.query(`select id from keel.webhook_event where kind = 'proposal.created'`)).rows[0].id;
    expect(receiver.accepted('ops')).toEqual([`keel-event-${eventId}`]);
    expect(receiver.accepted('pager')).toEqual([`keel-event-${eventId}`]);
    expect(receiver.received.every((r) => r.verified)).toBe(true);
    const body = receiver.received.find((r) => r.endpoint === 'pager')!.body;
    expect(body).toMatchObject({
      type: 'proposal.created',
      data: { proposer: 'operator', url: expect.stringMatching(/^https:\/\/keel\.example\/recovery\/\d+$/) },
    });
    expect(body.text).toMatch(
      new RegExp(
        String.raw`^Recovery proposal #\d+ for batch \d+ needs an approver: ` +
          String.raw`asked by operator \("worker host lost its disk"\), expires .*Z\. ` +
          String.raw`https:\/\/keel\.example\/recovery\/\d+$`,
      ),
    );
  });

  it('signs each request so the standardwebhooks package verifies it, keeping the Keel-Webhook-* headers', () => {
    const [delivery] = receiver.received.filter((r) => r.endpoint === 'pager');
    const raw = JSON.stringify(delivery!.body);
    const { headers } = delivery!;
    expect(headers['webhook-id']).toBe(delivery!.body.id);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(
      new Webhook(new TextEncoder().encode(SECRETS.pager), { format: 'raw' }).verify(
        raw,
        headers as Record<string, string>,
      ),
    ).toEqual(delivery!.body);
    // Another endpoint's secret, or a changed body, does not verify.
    expect(() => new Webhook(SECRETS.ops).verify(raw, headers as Record<string, string>)).toThrow(
      'No matching signature found',
    );
    expect(() =>
      new Webhook(new TextEncoder().encode(SECRETS.pager), { format: 'raw' }).verify(
        `${raw} `,
        headers as Record<string, string>,
      ),
    ).toThrow('No matching signature found');
    // The earlier scheme, checked the way its documentation told receivers to.
    const legacy = createHmac('sha256', SECRETS.pager)
      .update(`${headers['keel-webhook-timestamp']}.${raw}`)
      .digest('hex');
    expect(headers['keel-webhook-signature']).toBe(`v1=${legacy}`);
    expect(headers['keel-webhook-id']).toBe(delivery!.body.id);
  });

  it('notifies decisions, supersession and expiry, and bounds free text', async () => {
    const id = await proposal('x'.repeat(1_000));
    await pool.query(
      `update keel.recovery_proposal set status = 'APPROVED', decider_id = 'u2', decider_login = 'approver',
       decided_at = now(), reason = $2 where id = $1`,
      [id, 'y'.repeat(1_000)],
    );
    const superseded = await proposal('second');
    await pool.query(`update keel.recovery_proposal set status = 'SUPERSEDED', decided_at = now() where id = $1`, [
      superseded,
    ]);
    const expired = await proposal('third');
    await pool.query(`update keel.recovery_proposal set status = 'EXPIRED', decided_at = now() where id = $1`, [
      expired,
    ]);
    const { rows } = await pool.query(
      `select kind, subject, payload from keel.webhook_event where subject = any($1) order by id`,
      [[`proposal:${id}`, `proposal:${superseded}`, `proposal:${expired}`]],
    );
    expect(rows.map((r) => `${r.kind} ${r.subject}`)).toEqual([
      `proposal.created proposal:${id}`,
      `proposal.decided proposal:${id}`,
      `proposal.created proposal:${superseded}`,
      `proposal.superseded proposal:${superseded}`,
      `proposal.created proposal:${expired}`,
      `proposal.expired proposal:${expired}`,
    ]);
    expect(rows[1].payload).toMatchObject({ status: 'APPROVED', decider: 'approver' });
    expect(rows[1].payload.note).toHaveLength(280);
    expect(rows[1].payload.reason).toHaveLength(280);
  });

  it('notifies a finished bulk replay with its per-item results', async () => {
    const { rows } = await pool.query(`insert into keel.bulk_replay (created_by_id, created_by_login, note,
                        filter, item_count, status, started_at, started_by_id, started_by_login, started_by_role)
      values ('u', 'support', 'after the rpc outage', '{}', 2, 'RUNNING', now(), 'u', 'support', 'support')
      returning id`);
    const job = rows[0].id;
    await pool.query(
      `insert into keel.bulk_replay_item (job, receipt_id, recorded_at_ms, result)
       values ($1, 'r1', 1, 'replayed'), ($1, 'r2', 1, 'no_longer_dead_lettered')`,
      [job],
    );
    await pool.query(
      `update keel.bulk_replay set status = 'COMPLETED', processed_count = 2, finished_at = now() where id = $1`,
      [job],
    );
    const [event] = (
      await pool.query(`select kind, payload from keel.webhook_event where subject = $1`, [`bulk_replay:${job}`])
    ).rows;
    expect(event).toEqual({
      kind: 'bulk_replay.finished',
      payload: {
        jobId: job,
        status: 'COMPLETED',
        itemCount: 2,
        processedCount: 2,
        startedBy: 'support',
        note: 'after the rpc outage',
        results: { replayed: 1, no_longer_dead_lettered: 1 },
        path: `/settlements/bulk/${job}`,
      },
    });
  });

  it('reports dead letters of one reason rising above the threshold once per window', async () => {
    await pool.query(`insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json,
                      recorded_at_ms)
      select 'wh-' || g, 1, 1, case when g <= 6 then 'rpc'
      else 'signature' end, '{}', (extract(epoch from clock_timestamp()) * 1000)::bigint - g
      from generate_series(1, 8) g`);
    const settings = { deadLetterThreshold: 5, deadLetterWindowMs: 900_000 };
    expect(await checkDeadLetterRise(db, settings)).toEqual(['rpc']);
    expect(await checkDeadLetterRise(db, settings)).toEqual([]);
    const [event] = (await pool.query(`select payload from keel.webhook_event where kind = 'dead_letters.rising'`))
      .rows;
    expect(event.payload).toEqual({
      reason: 'rpc',
      count: 6,
      threshold: 5,
      windowMinutes: 15,
      path: '/settlements/dead-letters?reason=rpc',
    });
  });

  it('gives a delivery up as FAILED after the last attempt, keeping its last error', async () => {
    await pool.query(
      `update keel.webhook_delivery set status = 'DELIVERED', delivered_at = now() where status = 'PENDING'`,
    );
    await proposal('will fail');
    await pool.query(
      `update keel.webhook_delivery set attempts = ${WEBHOOK_MAX_ATTEMPTS - 1} where status = 'PENDING'`,
    );
    receiver.answers.ops!.push(503);
    receiver.answers.pager!.push(200);
    expect(await deliverDueWebhooks(db, { endpoints, baseUrl: undefined })).toEqual({
      delivered: 1,
      retried: 0,
      failed: 1,
    });
    const { rows } =
      await pool.query(`select endpoint, status, last_error as "lastError", last_http_status as "httpStatus"
                        from keel.webhook_delivery
      where attempts = ${WEBHOOK_MAX_ATTEMPTS} order by endpoint`);
    expect(rows).toEqual([
      { endpoint: 'ops', status: 'FAILED', lastError: 'HTTP 503', httpStatus: 503 },
      { endpoint: 'pager', status: 'DELIVERED', lastError: null, httpStatus: 200 },
    ]);
  });
});

const admin: Actor = { id: 'u-admin', login: 'admin', name: 'Admin', role: 'admin' };
const adminPorts = (): WebhookAdminPorts => ({
  unitOfWork: postgresWebhookUnitOfWork(db),
  sender: httpWebhookSender({ endpoints, baseUrl: 'https://keel.example' }),
});
const audits = async (action: string) =>
  (
    await pool.query(
      `select actor_login as actor, outcome, code, target_kind as "targetKind", target_id as "targetId",
       operation_id as "operationId", before, after
       from keel.audit_event where action = $1 order by id`,
      [action],
    )
  ).rows;
const deliveryOf = async (eventKind: string, endpoint: string) =>
  (
    await pool.query(
      `select d.id, d.event_id as "eventId" from keel.webhook_delivery d join keel.webhook_event e on e.id = d.event_id
                      where e.kind = $1 and d.endpoint = $2 order by d.id desc limit 1`,
      [eventKind, endpoint],
    )
  ).rows[0] as { id: number; eventId: number };

describe('Send test and Retry now', () => {
  it('sends a test event to one endpoint, signed and audited, once per operation id when requests race', async () => {
    const before = receiver.received.length;
    const results = await Promise.all([
      sendTestWebhook(adminPorts(), admin, { endpoint: 'ops', operationId: 'send-test-1' }),
      sendTestWebhook(adminPorts(), admin, { endpoint: 'ops', operationId: 'send-test-1' }),
    ]);
    const values = results.map((r) => (r.ok ? r.value : null));
    expect(values.map((v) => v?.repeated).sort()).toEqual([false, true]);
    const sent = values.find((v) => v?.repeated === false)!;
    expect(sent.delivery).toMatchObject({
      endpoint: 'ops',
      status: 'DELIVERED',
      attempts: 1,
      lastHttpStatus: 200,
      lastError: null,
    });
    // One request reached the receiver, verified with the standardwebhooks package.
    const got = receiver.received.slice(before);
    expect(got.map((r) => [r.endpoint, r.body.type, r.verified])).toEqual([['ops', 'webhook.test', true]]);
    expect(got[0]!.body.data).toEqual({ endpoint: 'ops', requestedBy: 'admin', url: 'https://keel.example/webhooks' });
    const { eventId } = await deliveryOf('webhook.test', 'ops');
    expect(await audits('webhook.send_test')).toEqual([
      {
        actor: 'admin',
        outcome: 'APPLIED',
        code: null,
        targetKind: 'webhook_endpoint',
        targetId: 'ops',
        operationId: 'send-test-1',
        before: null,
        after: { deliveryId: sent.delivery.id, eventId },
      },
    ]);
    // The same operation id later still sends nothing; a new press sends again.
    const again = await sendTestWebhook(adminPorts(), admin, { endpoint: 'ops', operationId: 'send-test-1' });
    expect(again).toEqual({ ok: true, value: { delivery: sent.delivery, repeated: true } });
    expect(receiver.received.length).toBe(before + 1);
    const next = await sendTestWebhook(adminPorts(), admin, { endpoint: 'pager', operationId: 'send-test-2' });
    expect(next.ok && next.value.delivery).toMatchObject({ endpoint: 'pager', status: 'DELIVERED' });
    expect(receiver.received.length).toBe(before + 2);
  });

  it('refuses an endpoint that is not configured (audited, no event written) and a role other than admin', async () => {
    const events = async () => (await pool.query(`select count(*)::int as n from keel.webhook_event`)).rows[0].n;
    const count = await events();
    expect(await sendTestWebhook(adminPorts(), admin, { endpoint: 'nobody', operationId: 'send-test-3' })).toEqual({
      ok: false,
      error: { code: 'UNKNOWN_ENDPOINT', message: 'No endpoint named nobody is configured (KEEL_WEBHOOK_URLS).' },
    });
    expect(await events()).toBe(count);
    expect((await audits('webhook.send_test')).at(-1)).toMatchObject({
      outcome: 'REFUSED',
      code: 'UNKNOWN_ENDPOINT',
      targetId: 'nobody',
      operationId: 'send-test-3',
    });
    const support: Actor = { ...admin, id: 'u-support', login: 'support', role: 'support' };
    expect(await sendTestWebhook(adminPorts(), support, { endpoint: 'ops', operationId: 'send-test-4' })).toMatchObject(
      { ok: false, error: { code: 'FORBIDDEN' } },
    );
    expect(await retryWebhookDelivery(adminPorts(), support, { deliveryId: 1, operationId: 'retry-0' })).toMatchObject({
      ok: false,
      error: { code: 'FORBIDDEN' },
    });
    expect(await events()).toBe(count);
  });

  it('retries a failed delivery now with the same webhook-id, audited, once per operation id', async () => {
    // The delivery given up as FAILED above (HTTP 503 on its last attempt).
    const { rows } = await pool.query(
      `select id, event_id as "eventId" from keel.webhook_delivery where status = 'FAILED' and endpoint = 'ops'`,
    );
    const failed = rows[0] as { id: number; eventId: number };
    const before = receiver.received.length;
    const retried = await retryWebhookDelivery(adminPorts(), admin, { deliveryId: failed.id, operationId: 'retry-1' });
    expect(retried).toEqual({
      ok: true,
      value: {
        repeated: false,
        delivery: {
          id: failed.id,
          endpoint: 'ops',
          status: 'DELIVERED',
          attempts: WEBHOOK_MAX_ATTEMPTS + 1,
          lastHttpStatus: 200,
          lastError: null,
        },
      },
    });
    const got = receiver.received.slice(before);
    expect(got.map((r) => [r.headers['webhook-id'], r.verified])).toEqual([[`keel-event-${failed.eventId}`, true]]);
    expect((await audits('webhook.retry')).at(-1)).toEqual({
      actor: 'admin',
      outcome: 'APPLIED',
      code: null,
      targetKind: 'webhook_delivery',
      targetId: String(failed.id),
      operationId: 'retry-1',
      before: { status: 'FAILED', attempts: WEBHOOK_MAX_ATTEMPTS, lastHttpStatus: 503, lastError: 'HTTP 503' },
      after: null,
    });
    // A repeat of that request sends nothing; a new one finds nothing to retry.
    expect(
      await retryWebhookDelivery(adminPorts(), admin, { deliveryId: failed.id, operationId: 'retry-1' }),
    ).toMatchObject({ ok: true, value: { repeated: true } });
    expect(
      await retryWebhookDelivery(adminPorts(), admin, { deliveryId: failed.id, operationId: 'retry-2' }),
    ).toMatchObject({ ok: false, error: { code: 'ALREADY_DELIVERED' } });
    expect(
      await retryWebhookDelivery(adminPorts(), admin, { deliveryId: 2_000_000_000, operationId: 'retry-3' }),
    ).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
    expect(receiver.received.length).toBe(before + 1);
    expect((await audits('webhook.retry')).slice(-2).map((a) => [a.outcome, a.code])).toEqual([
      ['REFUSED', 'ALREADY_DELIVERED'],
      ['REFUSED', 'NOT_FOUND'],
    ]);
  });

  it('refuses Retry now while a worker is sending the delivery, and never sends one twice when they race', async () => {
    await pool.query(
      `update keel.webhook_delivery set status = 'DELIVERED', delivered_at = now() where status = 'PENDING'`,
    );
    await proposal('held by the worker');
    const held = await deliveryOf('proposal.created', 'ops');
    // The worker takes it and the receiver holds the request open: the worker is sending it now.
    const stalled = receiver.stallNextRequest();
    const working = deliverDueWebhooks(db, { endpoints, baseUrl: undefined });
    const { response } = await stalled;
    expect(
      await retryWebhookDelivery(adminPorts(), admin, { deliveryId: held.id, operationId: 'retry-race-0' }),
    ).toEqual({
      ok: false,
      error: {
        code: 'DELIVERY_IN_FLIGHT',
        message: `Delivery #${held.id} is being sent right now; its outcome shows in a moment.`,
      },
    });
    response.writeHead(200).end();
    expect(await working).toEqual({ delivered: 2, retried: 0, failed: 0 });
    expect(
      await retryWebhookDelivery(adminPorts(), admin, { deliveryId: held.id, operationId: 'retry-race-1' }),
    ).toMatchObject({ ok: false, error: { code: 'ALREADY_DELIVERED' } });

    // The worker and Retry now start on one due delivery at the same moment: it is sent once, by one of them.
    for (let round = 0; round < 8; round += 1) {
      await proposal(`race ${round}`);
      const due = await deliveryOf('proposal.created', 'ops');
      const [report, retried] = await Promise.all([
        deliverDueWebhooks(db, { endpoints, baseUrl: undefined }),
        retryWebhookDelivery(adminPorts(), admin, { deliveryId: due.id, operationId: `retry-race-${round + 2}` }),
      ]);
      const sentTo = receiver.received.filter((r) => r.endpoint === 'ops' && r.body.id === `keel-event-${due.eventId}`);
      expect(sentTo, `round ${round}`).toHaveLength(1);
      expect(report.delivered + (retried.ok ? 1 : 0), `round ${round}`).toBe(2);
      if (!retried.ok) expect(['DELIVERY_IN_FLIGHT', 'ALREADY_DELIVERED']).toContain(retried.error.code);
      expect(
        (await pool.query(`select status, attempts from keel.webhook_delivery where id = $1`, [due.id])).rows[0],
      ).toEqual({ status: 'DELIVERED', attempts: 1 });
    }
  });
});

describe('endpoint formats', () => {
  const GENERIC_SECRET = `whsec_${Buffer.alloc(24, 0x61).toString('base64')}`;
  const OPSGENIE_KEY = 'eb243592-faa2-4ba2-a551-1afdf565c889';

  it("delivers each format as its vendor's schema requires, one alert opened and closed per proposal", async () => {
    const receivers = await startFormatReceivers({ secrets: { hooks: GENERIC_SECRET }, opsgenieKey: OPSGENIE_KEY });
    try {
      const errors: { name: string; message: string }[] = [];
      const { endpoints: formatted } = parseWebhookSettings(
        {
          KEEL_WEBHOOK_URLS:
            `hooks=${receivers.base}/generic/hooks,chat=${receivers.base}/slack/services/T0/B0/x,` +
            `pd=${receivers.base}/pagerduty/v2/enqueue,og=${receivers.base}/opsgenie/v2/alerts`,
          KEEL_WEBHOOK_SECRET_HOOKS: GENERIC_SECRET,
          KEEL_WEBHOOK_FORMAT_CHAT: 'slack',
          KEEL_WEBHOOK_FORMAT_PD: 'pagerduty',
          KEEL_WEBHOOK_ROUTING_KEY_PD: 'R0utingKey'.padEnd(32, '0'),
          // A vendor endpoint may carry the signature headers too.
          KEEL_WEBHOOK_SECRET_PD: GENERIC_SECRET,
          KEEL_WEBHOOK_FORMAT_OG: 'opsgenie',
          KEEL_WEBHOOK_API_KEY_OG: OPSGENIE_KEY,
        },
        errors,
      );
      expect(errors).toEqual([]);
      await pool.query(
        `update keel.webhook_delivery set status = 'DELIVERED', delivered_at = now() where status <> 'DELIVERED'`,
      );
      await syncWebhookEndpoints(db, formatted);
      expect((await pool.query(`select name, format, enabled from keel.webhook_endpoint order by name`)).rows).toEqual([
        { name: 'chat', format: 'slack', enabled: true },
        { name: 'hooks', format: 'generic', enabled: true },
        { name: 'og', format: 'opsgenie', enabled: true },
        { name: 'ops', format: 'generic', enabled: false },
        { name: 'pager', format: 'generic', enabled: false },
        { name: 'pd', format: 'pagerduty', enabled: true },
      ]);

      // A proposal waits, then is approved; dead letters rise; a bulk replay finishes; an admin sends a test to each.
      const id = await proposal('a <note> & more');
      await pool.query(
        `update keel.recovery_proposal set status = 'APPROVED', decider_id = 'u2', decider_login = 'approver',
         decided_at = now() where id = $1`,
        [id],
      );
      await pool.query(`insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json,
                        recorded_at_ms)
        select 'fmt-' || g, 1, 1, 'gas_price', '{}', (extract(epoch from clock_timestamp()) * 1000)::bigint - g
        from generate_series(1, 7) g`);
      expect(await checkDeadLetterRise(db, { deadLetterThreshold: 5, deadLetterWindowMs: 900_000 })).toEqual([
        'gas_price',
      ]);
      const { rows } = await pool.query(`insert into keel.bulk_replay (created_by_id, created_by_login, note,
                          filter, item_count, status, started_at, started_by_id, started_by_login, started_by_role)
        values ('u', 'support', 'formats', '{}', 0, 'RUNNING', now(), 'u', 'support', 'support') returning id`);
      await pool.query(`update keel.bulk_replay set status = 'COMPLETED', finished_at = now() where id = $1`, [
        rows[0].id,
      ]);
      const ports: WebhookAdminPorts = {
        unitOfWork: postgresWebhookUnitOfWork(db),
        sender: httpWebhookSender({ endpoints: formatted, baseUrl: 'https://keel.example' }),
      };
      for (const endpoint of ['hooks', 'chat', 'pd', 'og']) {
        expect(await sendTestWebhook(ports, admin, { endpoint, operationId: `format-test-${endpoint}` })).toMatchObject(
          { ok: true, value: { delivery: { status: 'DELIVERED' } } },
        );
      }
      while ((await deliverDueWebhooks(db, { endpoints: formatted, baseUrl: 'https://keel.example' })).delivered > 0);

      // Every request is one its vendor accepts, and every delivery is recorded delivered.
      expect(
        receivers.received
          .filter((r) => r.problems.length > 0)
          .map((r) => `${r.receiver} ${r.path}: ${r.problems.join('; ')}`),
      ).toEqual([]);
      expect(receivers.received.map((r) => r.receiver).sort()).toEqual([
        ...Array(5).fill('generic'),
        ...Array(5).fill('opsgenie'),
        ...Array(5).fill('pagerduty'),
        ...Array(5).fill('slack'),
      ]);
      const states = await pool.query(
        `select endpoint, status, last_http_status as "httpStatus" from keel.webhook_delivery where endpoint = any($1)
         group by 1, 2, 3 order by 1`,
        [['chat', 'hooks', 'og', 'pd']],
      );
      expect(states.rows).toEqual([
        { endpoint: 'chat', status: 'DELIVERED', httpStatus: 200 },
        { endpoint: 'hooks', status: 'DELIVERED', httpStatus: 204 },
        { endpoint: 'og', status: 'DELIVERED', httpStatus: 202 },
        { endpoint: 'pd', status: 'DELIVERED', httpStatus: 202 },
      ]);

      // PagerDuty: the waiting proposal triggers, its approval resolves the same alert.
      const pd = receivers.received
        .filter((r) => r.receiver === 'pagerduty')
        .map((r) => r.body as { event_action: string; dedup_key: string; payload?: { severity: string } });
      expect(pd.filter((e) => e.dedup_key === `keel-proposal-${id}`).map((e) => e.event_action)).toEqual([
        'trigger',
        'resolve',
      ]);
      expect(pd.find((e) => e.dedup_key === 'keel-dead-letters-gas_price')).toMatchObject({
        event_action: 'trigger',
        payload: { severity: 'error' },
      });
      expect(receivers.received.find((r) => r.receiver === 'pagerduty')!.headers['webhook-signature']).toMatch(/^v1,/);
      // Opsgenie: created under an alias, closed by that alias.
      const og = receivers.received.filter((r) => r.receiver === 'opsgenie');
      expect(og.filter((r) => (r.body as { alias?: string }).alias === `keel-proposal-${id}`)).toHaveLength(1);
      expect(
        og
          .filter((r) => r.path === `/opsgenie/v2/alerts/keel-proposal-${id}/close`)
          .map((r) => r.query.get('identifierType')),
      ).toEqual(['alias']);
      // Slack: the note's markup escaped, the console linked.
      const slack = receivers.received
        .filter((r) => r.receiver === 'slack')
        .map((r) => (r.body as { text: string }).text);
      expect(slack.find((t) => t.includes(`#${id} `) && t.includes('needs an approver'))).toContain(
        `("a &lt;note&gt; &amp; more")`,
      );
      expect(slack.every((t) => / <https:\/\/keel\.example\/[^|]+\|Open in Keel>$/.test(t))).toBe(true);
    } finally {
      await syncWebhookEndpoints(db, endpoints);
      await receivers.close();
    }
  });
});
