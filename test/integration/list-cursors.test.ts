import { beforeAll, describe, expect, it, vi } from 'vitest';
import { postgresSettlementUnitOfWork } from '../../lib/adapters/settlement-replay';
import type { Actor } from '../../lib/domain/actor';
import type { Database } from '../../lib/db/client';
import { previewBulkReplay } from '../../lib/services/bulk-replay';
import { freshDatabase } from '../support/database';

/**
 * The list routes paged by a keyset cursor, called as Next.js calls them: a cursor the list did
 * not give out is the routes' one 400 for a bad search param (the read's schema decodes it), and
 * the cursor a first page gave out reads the next page.
 */

const held = vi.hoisted(() => ({
  db: null as Database | null,
  actor: { id: 'u-support', login: 'support', name: 'Sam Support', role: 'support' } as Actor,
}));

vi.mock('../../lib/server/session', () => ({
  currentActor: async () => held.actor,
  currentSessionToken: async () => null,
}));
vi.mock('../../lib/server/composition-root', () => ({
  runtime: () => ({
    db: held.db,
    replica: null,
    settings: { staleThresholdMs: 900_000 },
    ownerToken: Buffer.alloc(16, 7),
  }),
}));

const { GET: executions } = await import('../../app/api/executions/route');
const { GET: proposals } = await import('../../app/api/proposals/route');
const { GET: queue } = await import('../../app/api/settlements/queue/route');
const { GET: deadLetters } = await import('../../app/api/settlements/dead-letters/route');
const { GET: bulkReplays } = await import('../../app/api/settlements/bulk-replays/route');

const { pool, db } = await freshDatabase();
held.db = db;

type Route = (request: Request, context: unknown) => Promise<Response>;

const ROUTES: [path: string, route: Route, rows: string, id: (row: Record<string, unknown>) => unknown][] = [
  ['/api/executions', executions, 'items', (r) => r.id],
  ['/api/proposals', proposals, 'items', (r) => r.id],
  ['/api/settlements/queue', queue, 'rows', (r) => r.receiptId],
  ['/api/settlements/dead-letters', deadLetters, 'rows', (r) => r.receiptId],
  ['/api/settlements/bulk-replays', bulkReplays, 'jobs', (r) => r.id],
];

const get = (route: Route, path: string, search: Record<string, string> = {}) =>
  route(new Request(`http://keel.test${path}?${new URLSearchParams(search)}`), { params: Promise.resolve({}) });

/** Every row a list could read or a refusal could write: a bad cursor changes none of them. */
async function snapshot() {
  const count = async (table: string) =>
    Number((await pool.query(`select count(*)::int as n from ${table}`)).rows[0].n);
  return {
    audit: await count('keel.audit_event'),
    proposals: await count('keel.recovery_proposal'),
    attempts: await count('settle.attempts'),
    deadLetters: await count('settle.dead_letters'),
    bulkReplays: await count('keel.bulk_replay'),
  };
}

beforeAll(async () => {
  // More than a page of each list (50 rows; 20 bulk replays), ties on the sort key included.
  await pool.query(`
    insert into oxide_batch.ob_job_definition (id, job_name, definition_revision, manifest_format, manifest_digest,
      manifest) values (1, 'paged-job', 'r1', 1, sha256('m'), '{}');
    insert into oxide_batch.ob_job_instance (id, job_name, instance_key)
      select n, 'paged-job', sha256(convert_to('instance-' || n, 'UTF8')) from generate_series(1, 60) n;
    insert into oxide_batch.ob_job_execution (job_instance_id, definition_id, attempt, status, started_at, updated_at)
      select n, 1, 1, 'STARTED', now() - interval '1 day', now() - (n % 7) * interval '1 minute'
      from generate_series(1, 60) n;
    insert into keel.recovery_proposal (target_kind, target_id, kind, evidence_digest, evidence, expected_version,
      proposer_id, proposer_login, wait_owner, wait_deadline, wait_cancellation_id)
      select 'batch', n::text, 'TAKEOVER', sha256(convert_to(n::text, 'UTF8')), '{}', 0, 'user:operator', 'operator',
        'p', clock_timestamp() + interval '15 minutes', 'c' from generate_series(1, 55) n;
    insert into settle.attempts (receipt_id, finalized_at, work_kind, attempts, next_visible_at_ms, row_version,
      lease_owner, lease_token, lease_until_ms, reason_code, updated_at_ms)
      select 'q-' || lpad(n::text, 3, '0'), 1, 'pending_observation', 0, 1000000 + (n % 9), 0, null, null, null,
        null, 1 from generate_series(1, 60) n;
    insert into settle.dead_letters (receipt_id, finalized_at, attempts, reason, canonical_json, recorded_at_ms)
      select 'd-' || lpad(n::text, 3, '0'), 1, 2, 'rpc', '{}', 1700000000000 - (n % 9) from generate_series(1, 60) n;`);
  const deps = { unitOfWork: postgresSettlementUnitOfWork(db) };
  for (let i = 0; i < 22; i += 1)
    await previewBulkReplay(deps, held.actor, { filter: { receiptIdPrefix: `d-00${i % 10}` }, note: `job ${i}` });
}, 120_000);

describe('a list route and its cursor', () => {
  it.each(ROUTES)(
    '%s answers a cursor it did not give out with the typed 400, changing nothing',
    async (path, route) => {
      const before = await snapshot();
      const forged = Buffer.from(JSON.stringify(['x', 'y', 'z']), 'utf8').toString('base64url');
      for (const cursor of ['garbage', forged, '%%%', 'a b']) {
        const response = await get(route, path, { cursor });
        expect(response.status, cursor).toBe(400);
        expect(await response.json()).toEqual({
          code: 'INVALID_INPUT',
          message: 'Some query parameters are not valid.',
          fieldErrors: { cursor: ['This cursor was not made by Keel.'] },
        });
      }
      expect(await snapshot()).toEqual(before);
    },
  );

  it.each(ROUTES)('%s reads the next page with the cursor its first page gave out', async (path, route, rows, id) => {
    const first = await get(route, path);
    expect(first.status).toBe(200);
    const page1 = await first.json();
    expect(typeof page1.nextCursor).toBe('string');
    const second = await get(route, path, { cursor: page1.nextCursor });
    expect(second.status).toBe(200);
    const page2 = await second.json();
    const ids = [...page1[rows], ...page2[rows]].map(id);
    expect(page2[rows].length).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
