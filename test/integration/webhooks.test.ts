import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWebhookSettings, type WebhookEndpointSetting } from '../../lib/config/webhooks';
import { verifyWebhook, WEBHOOK_HEADERS, WEBHOOK_MAX_ATTEMPTS, webhookSignature, type WebhookBody } from '../../lib/domain/webhook';
import { checkDeadLetterRise, deliverDueWebhooks, syncWebhookEndpoints } from '../../lib/workers/webhook-worker';
import { freshDatabase } from '../support/database';

const { pool, db, url } = await freshDatabase();

const SECRETS = { ops: 'o'.repeat(40), pager: 'p'.repeat(40) };

interface Received {
  endpoint: string;
  body: WebhookBody;
  verified: boolean;
  status: number;
}

/** A receiver as a team would write one: it checks the signature and the timestamp, and answers as told. */
function startReceiver() {
  const received: Received[] = [];
  const answers: Record<string, number[]> = { ops: [], pager: [] };
  let stallNext: ((request: IncomingMessage) => void) | null = null;
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
        stalled(request);
        return;
      }
      const verification = verifyWebhook(
        SECRETS[endpoint],
        { timestamp: request.headers[WEBHOOK_HEADERS.timestamp] as string, signature: request.headers[WEBHOOK_HEADERS.signature] as string },
        raw,
        Math.floor(Date.now() / 1000),
      );
      const status = !verification.ok ? 401 : answers[endpoint]!.shift() ?? 200;
      received.push({ endpoint, body: JSON.parse(raw), verified: verification.ok, status });
      response.writeHead(status).end();
    });
  });
  return {
    server,
    received,
    answers,
    stallNextRequest: () => new Promise<IncomingMessage>((resolve) => (stallNext = resolve)),
    /** Deliveries a receiver accepts, counted once per id as a receiver that drops repeats would. */
    accepted: (endpoint: string) => received.filter((r) => r.endpoint === endpoint && r.verified && r.status === 200).map((r) => r.body.id),
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
    { KEEL_WEBHOOK_URLS: `ops=${base}/ops,pager=${base}/pager`, KEEL_WEBHOOK_SECRET_OPS: SECRETS.ops, KEEL_WEBHOOK_SECRET_PAGER: SECRETS.pager },
    errors,
  );
  expect(errors).toEqual([]);
  endpoints = settings.endpoints;
  await syncWebhookEndpoints(db, endpoints);
});
afterAll(() => receiver.server.close());

async function proposal(note: string): Promise<number> {
  const { rows } = await pool.query(
    `insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence, expected_version, proposer_id, proposer_login, proposer_note,
       wait_owner, wait_deadline, wait_cancellation_id)
     values ('batch', $1, decode(repeat('ab', 32), 'hex'), '{"ownerToken":"never-sent"}', 1, 'u1', 'operator', $2, 'p', now() + interval '15 minutes', 'c')
     returning id`,
    [String(Math.floor(Math.random() * 1e9)), note],
  );
  return rows[0].id;
}

const deliveries = async (eventKind: string) =>
  (await pool.query(`select d.endpoint, d.status, d.attempts, d.last_error as "lastError" from keel.webhook_delivery d
                      join keel.webhook_event e on e.id = d.event_id where e.kind = $1 order by d.endpoint`, [eventKind])).rows;

describe('outgoing webhooks', () => {
  it('writes an event and one delivery per endpoint in the transaction of the change, and nothing for a rolled-back one', async () => {
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(`insert into keel.recovery_proposal (target_kind, target_id, evidence_digest, evidence, expected_version, proposer_id, proposer_login,
        wait_owner, wait_deadline, wait_cancellation_id) values ('batch', 'rolled-back', decode(repeat('ab', 32), 'hex'), '{}', 1, 'u1', 'operator', 'p', now(), 'c')`);
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
    const [event] = (await pool.query(`select payload from keel.webhook_event where subject = $1`, [`proposal:${id}`])).rows;
    expect(event.payload).toMatchObject({ proposalId: id, proposer: 'operator', note: 'worker host lost its disk', path: `/recovery/${id}` });
    expect(JSON.stringify(event.payload)).not.toContain('never-sent');
  });

  it('signs each delivery, retries a refused one with backoff, and a restart mid-retry still delivers it exactly once', async () => {
    receiver.answers.ops!.push(500);
    const first = await deliverDueWebhooks(db, { endpoints, baseUrl: 'https://keel.example' });
    expect(first).toEqual({ delivered: 1, retried: 1, failed: 0 });
    expect(await deliveries('proposal.created')).toEqual([
      { endpoint: 'ops', status: 'PENDING', attempts: 1, lastError: 'HTTP 500' },
      { endpoint: 'pager', status: 'DELIVERED', attempts: 1, lastError: null },
    ]);
    const retryIn = (await pool.query(`select extract(epoch from next_attempt_at - clock_timestamp())::float8 as s from keel.webhook_delivery where endpoint = 'ops'`)).rows[0].s;
    expect(retryIn).toBeGreaterThan(3);
    expect(retryIn).toBeLessThanOrEqual(5);
    // Nothing is due until the backoff has passed.
    expect(await deliverDueWebhooks(db, { endpoints, baseUrl: undefined })).toEqual({ delivered: 0, retried: 0, failed: 0 });

    // The backoff passes; a worker process takes the retry and is killed while the receiver holds it open.
    await pool.query(`update keel.webhook_delivery set next_attempt_at = clock_timestamp() where endpoint = 'ops'`);
    const env = {
      ...process.env,
      DATABASE_URL: url,
      KEEL_WEBHOOK_URLS: endpoints.map((e) => `${e.name}=${e.url}`).join(','),
      KEEL_WEBHOOK_SECRET_OPS: SECRETS.ops,
      KEEL_WEBHOOK_SECRET_PAGER: SECRETS.pager,
    };
    const startWorker = (): ChildProcess => spawn(process.execPath, ['--import', 'tsx', 'test/support/webhook-worker-process.ts'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    const stalled = receiver.stallNextRequest();
    const doomed = startWorker();
    await stalled;
    doomed.kill('SIGKILL');
    await once(doomed, 'exit');
    // Its lease still holds the delivery; once the lease lapses, the next Keel process takes it.
    expect((await pool.query(`select attempts, lease_until > clock_timestamp() as leased from keel.webhook_delivery where endpoint = 'ops'`)).rows[0]).toEqual({ attempts: 1, leased: true });
    await pool.query(`update keel.webhook_delivery set lease_until = clock_timestamp() where endpoint = 'ops'`);
    const successor = startWorker();
    try {
      while ((await deliveries('proposal.created'))[0].status !== 'DELIVERED') await new Promise((resolve) => setImmediate(resolve));
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
    expect(body).toMatchObject({ type: 'proposal.created', data: { proposer: 'operator', url: expect.stringMatching(/^https:\/\/keel\.example\/recovery\/\d+$/) } });
    expect(body.text).toMatch(/^Recovery proposal #\d+ for batch \d+ needs an approver: asked by operator \("worker host lost its disk"\), expires .*Z\. https:\/\/keel\.example\/recovery\/\d+$/);
  });

  it('refuses a body signed with another secret, a changed body and a stale timestamp', () => {
    const body = '{"id":"keel-event-1"}';
    const now = 1_800_000_000;
    const good = { timestamp: String(now), signature: `v1=${'0'.repeat(64)}` };
    expect(verifyWebhook(SECRETS.ops, good, body, now)).toEqual({ ok: false, code: 'BAD_SIGNATURE' });
    const signed = { timestamp: String(now), signature: webhookSignature(SECRETS.ops, now, body) };
    expect(verifyWebhook(SECRETS.ops, signed, body, now)).toEqual({ ok: true });
    expect(verifyWebhook(SECRETS.pager, signed, body, now)).toEqual({ ok: false, code: 'BAD_SIGNATURE' });
    expect(verifyWebhook(SECRETS.ops, signed, `${body} `, now)).toEqual({ ok: false, code: 'BAD_SIGNATURE' });
    expect(verifyWebhook(SECRETS.ops, signed, body, now + 301)).toEqual({ ok: false, code: 'STALE_TIMESTAMP' });
    expect(verifyWebhook(SECRETS.ops, { timestamp: null, signature: signed.signature }, body, now)).toEqual({ ok: false, code: 'MISSING_HEADERS' });
  });

  it('notifies decisions, supersession and expiry, and bounds free text', async () => {
    const id = await proposal('x'.repeat(1_000));
    await pool.query(`update keel.recovery_proposal set status = 'APPROVED', decider_id = 'u2', decider_login = 'approver', decided_at = now(), reason = $2 where id = $1`, [id, 'y'.repeat(1_000)]);
    const superseded = await proposal('second');
    await pool.query(`update keel.recovery_proposal set status = 'SUPERSEDED', decided_at = now() where id = $1`, [superseded]);
    const expired = await proposal('third');
    await pool.query(`update keel.recovery_proposal set status = 'EXPIRED', decided_at = now() where id = $1`, [expired]);
    const { rows } = await pool.query(`select kind, subject, payload from keel.webhook_event where subject = any($1) order by id`, [[`proposal:${id}`, `proposal:${superseded}`, `proposal:${expired}`]]);
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
    const { rows } = await pool.query(`insert into keel.bulk_replay (created_by_id, created_by_login, note, filter, item_count, status, started_at, started_by_id, started_by_login, started_by_role)
      values ('u', 'support', 'after the rpc outage', '{}', 2, 'RUNNING', now(), 'u', 'support', 'support') returning id`);
    const job = rows[0].id;
    await pool.query(`insert into keel.bulk_replay_item (job, receipt_id, recorded_at_ms, result) values ($1, 'r1', 1, 'replayed'), ($1, 'r2', 1, 'no_longer_dead_lettered')`, [job]);
    await pool.query(`update keel.bulk_replay set status = 'COMPLETED', processed_count = 2, finished_at = now() where id = $1`, [job]);
    const [event] = (await pool.query(`select kind, payload from keel.webhook_event where subject = $1`, [`bulk_replay:${job}`])).rows;
    expect(event).toEqual({
      kind: 'bulk_replay.finished',
      payload: { jobId: job, status: 'COMPLETED', itemCount: 2, processedCount: 2, startedBy: 'support', note: 'after the rpc outage', results: { replayed: 1, no_longer_dead_lettered: 1 }, path: `/settlements/bulk/${job}` },
    });
  });

  it('reports dead letters of one reason rising above the threshold once per window', async () => {
    await pool.query(`insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
      select 'wh-' || g, 1, 1, case when g <= 6 then 'rpc' else 'signature' end, '{}', (extract(epoch from clock_timestamp()) * 1000)::bigint - g
      from generate_series(1, 8) g`);
    const settings = { deadLetterThreshold: 5, deadLetterWindowMs: 900_000 };
    expect(await checkDeadLetterRise(db, settings)).toEqual(['rpc']);
    expect(await checkDeadLetterRise(db, settings)).toEqual([]);
    const [event] = (await pool.query(`select payload from keel.webhook_event where kind = 'dead_letters.rising'`)).rows;
    expect(event.payload).toEqual({ reason: 'rpc', count: 6, threshold: 5, windowMinutes: 15, path: '/settlements/dead-letters?reason=rpc' });
  });

  it('gives a delivery up as FAILED after the last attempt, keeping its last error', async () => {
    await pool.query(`update keel.webhook_delivery set status = 'DELIVERED', delivered_at = now() where status = 'PENDING'`);
    await proposal('will fail');
    await pool.query(`update keel.webhook_delivery set attempts = ${WEBHOOK_MAX_ATTEMPTS - 1} where status = 'PENDING'`);
    receiver.answers.ops!.push(503);
    receiver.answers.pager!.push(200);
    expect(await deliverDueWebhooks(db, { endpoints, baseUrl: undefined })).toEqual({ delivered: 1, retried: 0, failed: 1 });
    const { rows } = await pool.query(`select endpoint, status, last_error as "lastError", last_http_status as "httpStatus" from keel.webhook_delivery
      where attempts = ${WEBHOOK_MAX_ATTEMPTS} order by endpoint`);
    expect(rows).toEqual([
      { endpoint: 'ops', status: 'FAILED', lastError: 'HTTP 503', httpStatus: 503 },
      { endpoint: 'pager', status: 'DELIVERED', lastError: null, httpStatus: 200 },
    ]);
  });
});

