import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashKey, QueryClient } from '@tanstack/react-query';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { encodeCursor } from '../../lib/domain/cursor';
import { auditList } from '../../lib/reads/audit';
import { defineRead, parseForPage, type ReadDefinition, readForPage } from '../../lib/reads/define-read';
import { executionList } from '../../lib/reads/executions';
import * as handles from '../../lib/reads/queries';
import { type ReadShape, readKey, readPrefix, readQuery, readUrl } from '../../lib/reads/read-query';
import { proposalList } from '../../lib/reads/recovery';
import { retryKeyList } from '../../lib/reads/retry-keys';
import { bulkReplayList, deadLetterList, settlementQueue } from '../../lib/reads/settlements';
import { userList } from '../../lib/reads/users';
import { webhookDeliveries } from '../../lib/reads/webhooks';
import type * as auditReads from '../../lib/reads/audit';
import type * as executionReads from '../../lib/reads/executions';
import type * as needsYouReads from '../../lib/reads/needs-you';
import type * as overviewReads from '../../lib/reads/overview';
import type * as rateReads from '../../lib/reads/rates';
import type * as recoveryReads from '../../lib/reads/recovery';
import type * as retryKeyReads from '../../lib/reads/retry-keys';
import type * as searchReads from '../../lib/reads/search';
import type * as settlementReads from '../../lib/reads/settlements';
import type * as userReads from '../../lib/reads/users';
import type * as webhookReads from '../../lib/reads/webhooks';
import { parseInput } from '../../lib/server/parse-input';
import { corruptEnvelopesParams, unresolvedKeysParams } from '../../lib/url-state/retry-keys';
import { searchParamsOf, withSearch } from '../../lib/url-state/search-string';

const ROOT = join(__dirname, '../..');

/** What apiRoute() parses for a view's request: the query of the URL readQuery fetches. */
function routeParse(definition: ReadDefinition, url: string) {
  return parseInput(definition.search, Object.fromEntries(new URL(url, 'http://keel.test').searchParams));
}

describe('the URL serializer', () => {
  it('drops empty values and writes dates as UTC ISO text, readable in the address bar', () => {
    const at = new Date('2026-01-31T09:00:00Z');
    expect(searchParamsOf({ status: 'FAILED', job: null, q: '', stale: false, cursor: undefined, from: at })).toEqual({
      status: 'FAILED',
      from: '2026-01-31T09:00:00.000Z',
    });
    expect(withSearch('/executions', { status: 'FAILED', updatedFrom: at })).toBe(
      '/executions?status=FAILED&updatedFrom=2026-01-31T09:00:00.000Z',
    );
    expect(withSearch('/executions', { job: 'a b&c', status: null })).toBe('/executions?job=a+b%26c');
    expect(withSearch('/executions', { status: null })).toBe('/executions');
  });

  it('writes any text so that URLSearchParams, as the route and nuqs read it, gives it back unchanged', () => {
    const texts = [
      'a+b c',
      '100%',
      'x&y=z',
      '#frag',
      '?q',
      '"\'`<>',
      'tab\tnew\nline',
      'rcpt/1:2,3;@$',
      'ü 中 😀',
      '%2B',
    ];
    for (const text of texts) {
      const url = new URL(withSearch('/x', { q: text, other: '1' }), 'http://keel.test');
      expect(url.searchParams.get('q'), JSON.stringify(text)).toBe(text);
      expect(url.searchParams.get('other')).toBe('1');
    }
  });
});

describe('a read key', () => {
  it('is the path without /api, `[segments]` filled in, then the search params', () => {
    expect(readKey('/api/executions', { status: 'FAILED', job: null, cursor: undefined })).toEqual([
      'executions',
      { status: 'FAILED' },
    ]);
    expect(readKey('/api/executions/[id]', { id: 42 })).toEqual(['executions', '42', {}]);
    expect(readKey('/api/settlements/bulk-replays/[id]', { id: 7, result: 'FAILED', after: null })).toEqual([
      'settlements',
      'bulk-replays',
      '7',
      { result: 'FAILED' },
    ]);
  });

  it('is fetched from the route it names, a free-text segment encoded once', () => {
    const at = { receiptId: 'rc/1 ü?#', extra: 'x' };
    expect(readUrl('/api/settlements/receipts/[receiptId]', at)).toBe(
      `/api/settlements/receipts/${encodeURIComponent('rc/1 ü?#')}?extra=x`,
    );
    expect(readKey('/api/settlements/receipts/[receiptId]', at)).toEqual([
      'settlements',
      'receipts',
      'rc/1 ü?#',
      { extra: 'x' },
    ]);
  });

  it('hashes the same from the page and from the view, whatever the order or the empty values', () => {
    const fromPage = readKey('/api/audit', { outcome: 'REFUSED', actor: 'ada', cursor: null, to: undefined });
    const fromView = readKey('/api/audit', { actor: 'ada', outcome: 'REFUSED' });
    expect(hashKey(fromPage)).toBe(hashKey(fromView));
    expect(hashKey(fromPage)).not.toBe(hashKey(readKey('/api/audit', { actor: 'ada' })));
  });

  it('starts with its path prefix, so an action invalidates every key under a path and nothing else', async () => {
    expect(readPrefix('/api/settlements/queue')).toEqual(['settlements', 'queue']);
    expect(readPrefix('/api/executions/[id]')).toEqual(['executions']);
    const client = new QueryClient();
    const keys = {
      queue: readKey('/api/settlements/queue', { state: 'due' }),
      receipt: readKey('/api/settlements/receipts/[receiptId]', { receiptId: 'r1' }),
      groups: readKey('/api/settlements/dead-letters/groups', {}),
      executions: readKey('/api/executions', {}),
      execution: readKey('/api/executions/[id]', { id: 1 }),
    };
    for (const key of Object.values(keys)) client.setQueryData(key, { rows: [] });
    await client.invalidateQueries({ queryKey: readPrefix('/api/settlements') });
    const invalid = (key: readonly unknown[]) => client.getQueryState(key)?.isInvalidated;
    expect([keys.queue, keys.receipt, keys.groups].map(invalid)).toEqual([true, true, true]);
    expect([keys.executions, keys.execution].map(invalid)).toEqual([false, false]);
    await client.invalidateQueries({ queryKey: readPrefix('/api/executions') });
    expect([keys.executions, keys.execution].map(invalid)).toEqual([true, true]);
  });

  it('is what a handle gives a view: key, URL and defaults from one path', () => {
    const handle = readQuery<typeof userList>('/api/users');
    const options = handle.options({ role: 'admin', status: null });
    expect(options.queryKey).toEqual(['users', { role: 'admin' }]);
    expect(handle.url({ role: 'admin', status: null })).toBe('/api/users?role=admin');
    expect(readQuery<typeof userList>('/api/users', { staleTime: 60_000 }).options().staleTime).toBe(60_000);
  });
});

describe('a page and its route', () => {
  it('refuse the same retry-key filters: the page names a phase or category the route answers 400 with', () => {
    for (const raw of [{ phase: 'sideways' }, { category: 'NOPE' }, { execution: '-3' }, { job: 'a\u0000b' }]) {
      for (const params of [unresolvedKeysParams(raw), corruptEnvelopesParams(raw)]) {
        const page = parseForPage(retryKeyList, params);
        const route = routeParse(retryKeyList, readUrl(retryKeyList.path, params));
        expect(page.ok, JSON.stringify(params)).toBe(route.ok);
        if (!page.ok && !route.ok)
          expect(page.issues.map((i) => i.path.join('.')).sort()).toEqual(Object.keys(route.error.fieldErrors).sort());
      }
    }
    // `phase` is not a filter of the corrupt list: only the keys list refuses it.
    expect(parseForPage(retryKeyList, unresolvedKeysParams({ phase: 'sideways' })).ok).toBe(false);
    expect(parseForPage(retryKeyList, corruptEnvelopesParams({ phase: 'sideways' })).ok).toBe(true);
    expect(parseForPage(retryKeyList, unresolvedKeysParams({ phase: 'write', job: 'j' })).ok).toBe(true);
  });

  it('check what the browser sent before the value its URL state parsed, so a dropped value is still refused', () => {
    // nuqs would read ?status=NOPE as no status at all; the route, asked with NOPE, answers 400.
    const page = parseForPage(userList, { status: null }, { status: 'NOPE' });
    expect(page).toMatchObject({ ok: false, issues: [{ path: ['status'] }] });
    expect(routeParse(userList, '/api/users?status=NOPE').ok).toBe(false);
    expect(parseForPage(userList, { status: 'disabled' }, { status: 'disabled' }).ok).toBe(true);
  });

  it('answer a cursor Keel did not make with one field error, decoded by the schema itself', () => {
    const refused = { ok: false, error: { fieldErrors: { cursor: ['This cursor was not made by Keel.'] } } };
    const lists = [
      userList,
      auditList,
      webhookDeliveries,
      executionList,
      proposalList,
      settlementQueue,
      deadLetterList,
      bulkReplayList,
    ] as ReadDefinition[];
    for (const definition of lists) {
      for (const cursor of ['nope', encodeCursor(['older', 'not a time', 1]), 'a b', encodeCursor([1.5, 'x'])]) {
        expect(routeParse(definition, withSearch(definition.path, { cursor })), definition.path).toMatchObject(refused);
        expect(parseForPage(definition, { cursor })).toMatchObject({
          ok: false,
          issues: [{ path: ['cursor'], message: 'This cursor was not made by Keel.' }],
        });
      }
    }
    // A cursor Keel made arrives decoded; none is the first page.
    expect(routeParse(userList, withSearch('/api/users', { cursor: encodeCursor(['bob']) }))).toMatchObject({
      ok: true,
      value: { cursor: 'bob' },
    });
    expect(routeParse(webhookDeliveries, '/api/webhooks/deliveries')).toMatchObject({
      ok: true,
      value: { cursor: null },
    });
    const decoded = (definition: ReadDefinition, cursor: string) =>
      routeParse(definition, withSearch(definition.path, { cursor }));
    expect(decoded(executionList, encodeCursor(['1700000000000000', 42]))).toMatchObject({
      ok: true,
      value: { cursor: ['1700000000000000', 42] },
    });
    expect(decoded(proposalList, encodeCursor([7]))).toMatchObject({ ok: true, value: { cursor: 7 } });
    for (const list of [settlementQueue, deadLetterList])
      expect(decoded(list, encodeCursor([1700000000000, 'r-1']))).toMatchObject({
        ok: true,
        value: { cursor: [1700000000000, 'r-1'] },
      });
    expect(decoded(bulkReplayList, encodeCursor([3]))).toMatchObject({ ok: true, value: { cursor: 3 } });
    // The other filters are checked beside it, each on its own field.
    expect(routeParse(settlementQueue, '/api/settlements/queue?cursor=nope&minAge=soon')).toMatchObject({
      ok: false,
      error: { fieldErrors: { cursor: ['This cursor was not made by Keel.'], minAge: [expect.any(String)] } },
    });
  });
});

describe('a page read', () => {
  it('reads nothing until Prefetched asks or the page awaits it, so a failing list read is left out', async () => {
    let reads = 0;
    const counted = defineRead({
      path: '/api/counted',
      permission: 'read',
      source: 'list',
      read: async () => ++reads,
    });
    const actor = { id: 'u1', login: 'ada', name: 'Ada', role: 'viewer' as const };
    const page = await readForPage(counted, actor);
    expect(page.ok).toBe(true);
    expect(reads).toBe(0);
    if (page.ok) expect(page.prefetch.queryKey).toEqual(['counted', {}]);
  });
});

describe('every read', () => {
  const modules = readdirSync(join(ROOT, 'lib/reads')).filter(
    (file) => file.endsWith('.ts') && !['define-read.ts', 'read-query.ts', 'queries.ts'].includes(file),
  );
  const handlePaths = Object.values(handles).map((handle) => handle.path);

  it('comes from a module the type checker holds equal to its handles (below)', () => {
    expect(modules.sort()).toEqual(TYPED_MODULES);
  });

  it.each(modules)('of lib/reads/%s is served by its route file and has a handle for the browser', async (file) => {
    const exported = Object.entries(await import(`../../lib/reads/${file}`)).filter(
      (entry): entry is [string, ReadDefinition] =>
        typeof entry[1] === 'object' && entry[1] !== null && 'path' in entry[1] && 'read' in entry[1],
    );
    expect(exported.length).toBeGreaterThan(0);
    for (const [name, definition] of exported) {
      const route = join(ROOT, 'app', definition.path, 'route.ts');
      expect(existsSync(route), route).toBe(true);
      expect(readFileSync(route, 'utf8')).toContain(`export const GET = routeHandler(${name});`);
      expect(handlePaths, name).toContain(definition.path);
    }
  });
});

/** The handle a definition gives: what the browser's declared handle must equal, key, URL and data alike. */
type Handle<D extends ReadShape> = ReturnType<typeof readQuery<D>>;

// The type checker's half: every handle declared from client-safe types (lib/reads/queries.ts) is the
// one its server definition would give, matched by path, so the two cannot drift. A new definition in
// one of these modules is checked with no line of its own; the runtime test above lists the modules.
type Definitions = typeof auditReads &
  typeof executionReads &
  typeof needsYouReads &
  typeof overviewReads &
  typeof rateReads &
  typeof recoveryReads &
  typeof retryKeyReads &
  typeof searchReads &
  typeof settlementReads &
  typeof userReads &
  typeof webhookReads;
type ByPath<M> = { [K in keyof M as M[K] extends ReadShape ? M[K]['path'] : never]: M[K] };
type Derived = {
  [P in keyof ByPath<Definitions>]: ByPath<Definitions>[P] extends ReadShape ? Handle<ByPath<Definitions>[P]> : never;
};
type Declared = {
  [K in keyof typeof handles as (typeof handles)[K] extends { path: infer P extends string }
    ? P
    : never]: (typeof handles)[K];
};
const TYPED_MODULES = [
  'audit.ts',
  'executions.ts',
  'needs-you.ts',
  'overview.ts',
  'rates.ts',
  'recovery.ts',
  'retry-keys.ts',
  'search.ts',
  'settlements.ts',
  'users.ts',
  'webhooks.ts',
];
expectTypeOf<Pick<Declared, keyof Derived>>().toEqualTypeOf<Derived>();
