import { readFileSync, rmSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import type pg from 'pg';
import { createAuth } from '../lib/auth/auth';
import { AUTH_HTTP_ENDPOINTS, SSO_HTTP_ENDPOINTS } from '../lib/auth/http-surface';
import { isRole } from '../lib/domain/roles';
import {
  appEntries,
  baseUrl,
  callAction,
  callerFor,
  cookieHeader,
  DatabaseWatch,
  IDENTITIES,
  loadResults,
  permits,
  saveResults,
  serverActions,
  signedInContext,
  type CaseResult,
} from './support/access';
import { e2eDatabase } from './support/database';
import { ACTIONS, actionPermission, NO_ID, PAGES, renderAccessTable, ROUTES } from './support/entries';

/**
 * The access matrix: every server action of the build, every page and route handler
 * under app/, and every better-auth endpoint, called by each role, by nobody, with an
 * expired session and with a forged cookie. Who may do what comes only from
 * PERMISSIONS (lib/domain/roles.ts, docs/design.md#roles): what is allowed gets past
 * the guard, the rest is refused, and a refusal changes nothing but the audit log,
 * which gains exactly the refusal's row (server actions refused for a role) or
 * nothing (pages, routes, strangers).
 */

test.describe.configure({ timeout: 420_000 });

/**
 * The tables the /api/auth surface can write: better-auth's (lib/auth/auth.ts) besides its
 * rate-limit counters, and the per-account lockout's failure count, which a wrong password moves.
 */
const AUTH_TABLES = [
  'keel.user',
  'keel.session',
  'keel.account',
  'keel.verification',
  'keel.sign_in_lockout',
  'keel.audit_event',
];

/**
 * The only better-auth endpoints the console uses (issue 9, item 1), and the SSO start and
 * callback, which the e2e server mounts because it runs with an OpenID provider
 * (playwright.config.ts); every other one answers 404.
 */
const AUTH_ALLOWED = new Set<string>([...AUTH_HTTP_ENDPOINTS, ...SSO_HTTP_ENDPOINTS]);

/**
 * better-auth's endpoints as Keel configures it (read from lib/auth/auth.ts), plus the
 * ones issue 9 reproduced, so that unmounting a plugin cannot drop them from the matrix.
 */
function authEndpoints(): string[] {
  const auth = createAuth(
    {} as never,
    {
      secret: 'access-matrix-enumeration-only-0123456789',
      port: 3000,
      trustedProxies: [],
      signInPerMinute: 10,
    } as never,
  );
  const found = new Set<string>();
  for (const endpoint of Object.values(
    auth.api as Record<string, { path?: string; options?: { method?: string | string[] } }>,
  )) {
    if (!endpoint?.path) continue;
    const methods = endpoint.options?.method ?? 'GET';
    for (const method of Array.isArray(methods) ? methods : [methods])
      found.add(`${method === '*' ? 'GET' : method} ${endpoint.path}`);
  }
  for (const known of [
    'POST /admin/impersonate-user',
    'POST /admin/set-role',
    'POST /admin/create-user',
    'POST /admin/ban-user',
    'POST /admin/set-user-password',
    'POST /admin/revoke-user-sessions',
    'POST /admin/update-user',
    'POST /admin/remove-user',
    'POST /update-user',
    'POST /is-username-available',
    'GET /list-sessions',
    ...SSO_HTTP_ENDPOINTS,
  ])
    found.add(known);
  return [...found].sort();
}

// ---------------------------------------------------------------------------------------------

let db: pg.Client;
let watch: DatabaseWatch;
const samples = new Map<string, string | null>();

test.beforeAll(async () => {
  db = await e2eDatabase();
  watch = new DatabaseWatch(db);
  await watch.init();
  for (const spec of [...Object.values(PAGES), ...Object.values(ROUTES)]) {
    if (spec.sample && !samples.has(spec.sample))
      samples.set(spec.sample, (await db.query<{ v: string | null }>(spec.sample)).rows[0]?.v ?? null);
  }
});

test.afterAll(async () => {
  await db?.end();
});

/** The URL to call for a route pattern, and whether its dynamic segment names a row that exists. */
function concrete(pattern: string, sample?: string, query?: string): { url: string; exists: boolean } {
  const value = sample ? (samples.get(sample) ?? null) : null;
  const url =
    pattern.replace(/\[[^\]]+\]/g, () => encodeURIComponent(value ?? String(NO_ID))) + (query ? `?${query}` : '');
  return { url, exists: !sample || value !== null };
}

/** Checks one case and records it; the failures are soft so one run reports every case. */
function record(results: CaseResult[], result: Omit<CaseResult, 'pass'>, problems: string[]): void {
  results.push({
    ...result,
    pass: problems.length === 0,
    actual: problems.length ? `${result.actual} — ${problems.join('; ')}` : result.actual,
  });
  expect.soft(problems, `${result.dimension} ${result.entry} as ${result.identity}`).toEqual([]);
}

test('the matrix knows every server action, page and route handler the build and app/ have', async () => {
  rmSync('.keel/reports/access-matrix', { recursive: true, force: true });
  const actions = serverActions();
  expect(actions.length).toBeGreaterThan(0);
  expect(
    actions.map((a) => a.key).filter((k) => !(k in ACTIONS)),
    'server actions with no row in the matrix',
  ).toEqual([]);
  expect(
    appEntries('page').filter((p) => !(p in PAGES)),
    'pages with no row in the matrix',
  ).toEqual([]);
  expect(
    appEntries('route').filter((r) => !(r in ROUTES)),
    'route handlers with no row in the matrix',
  ).toEqual([]);
  // Each action's wrapper names the action the matrix takes its permission from.
  const declared = actions
    .filter((a) => ACTIONS[a.key])
    .map((a) => {
      const source = readFileSync(a.key.split('#')[0]!, 'utf8');
      const wrapped = new RegExp(`export const ${a.exportName} = action\\([\\s\\S]*?'([a-z_.]+)'`).exec(source);
      return `${a.exportName}: ${wrapped?.[1] ?? 'no action() wrapper'}`;
    });
  expect(declared, 'the action name each export declares').toEqual(
    actions.filter((a) => ACTIONS[a.key]).map((a) => `${a.exportName}: ${ACTIONS[a.key]!.name}`),
  );
  expect(authEndpoints().length).toBeGreaterThan(AUTH_ALLOWED.size);
  // docs/security.md's table is this one: regenerate it with renderAccessTable() when an entry changes. Compared
  // cell by cell, since the formatter pads the document's columns.
  const cells = (table: string) => table.replace(/ *\| */g, '|').replace(/\|-+(?=\|)/g, '|-');
  expect(cells(readFileSync('docs/security.md', 'utf8')), 'docs/security.md, "Who can reach what"').toContain(
    cells(renderAccessTable()),
  );
});

test('server actions, called by every role and stranger', async () => {
  for (const identity of IDENTITIES) {
    const caller = await callerFor(identity, db);
    const results: CaseResult[] = [];
    try {
      for (const action of serverActions()) {
        const spec = ACTIONS[action.key];
        if (!spec) continue; // the inventory test names it
        const allowed = permits(actionPermission(spec), identity);
        // Signing out ends the session: an allowed sign-out gets a session of its own.
        const own =
          allowed && action.exportName === 'signOut' && isRole(identity) ? await signedInContext(identity) : null;
        await caller.restoreExpired();
        const before = await watch.current();
        const answer = await callAction(own?.context ?? caller.context, action, [spec.input]);
        const after = await watch.current();
        const changed = DatabaseWatch.changed(before, after);
        const audit = await watch.auditSince(before);
        const code = answer.result
          ? answer.result.ok
            ? 'ok'
            : answer.result.code
          : `HTTP ${answer.status}${answer.location ? ` -> ${answer.location}` : ''}`;
        const problems: string[] = [];
        if (answer.status >= 500) problems.push(`HTTP ${answer.status}`);
        if (allowed) {
          if (!answer.result) problems.push('no action result');
          else if (!answer.result.ok && ['FORBIDDEN', 'UNAUTHENTICATED', 'INTERNAL'].includes(answer.result.code ?? ''))
            problems.push(`refused ${answer.result.code}`);
          if (own) {
            const live = await db.query('select 1 from keel.session where token = $1', [own.token]);
            if (live.rowCount) problems.push('the session outlived sign-out');
            if (changed.some((t) => t !== 'keel.session')) problems.push(`changed ${changed.join(', ')}`);
            await own.context.dispose();
          } else if (changed.length) problems.push(`changed ${changed.join(', ')}`);
          if (audit.some((row) => row.code === 'FORBIDDEN' || row.actor_login !== identity))
            problems.push(`audit ${JSON.stringify(audit)}`);
        } else if (isRole(identity)) {
          if (answer.result?.code !== 'FORBIDDEN') problems.push(`expected FORBIDDEN, got ${code}`);
          if (changed.length) problems.push(`changed ${changed.join(', ')}`);
          const [row, ...extra] = audit;
          if (
            !row ||
            extra.length ||
            row.outcome !== 'REFUSED' ||
            row.code !== 'FORBIDDEN' ||
            row.actor_login !== identity ||
            !row.request_id
          ) {
            problems.push(
              `expected exactly one REFUSED FORBIDDEN audit row by ${identity} with a request id, ` +
                `got ${JSON.stringify(audit)}`,
            );
          }
        } else {
          const toSignIn =
            answer.status >= 300 &&
            answer.status < 400 &&
            new URL(answer.location ?? '/', baseUrl()).pathname === '/sign-in';
          if (!(toSignIn || answer.status === 401 || answer.result?.code === 'UNAUTHENTICATED'))
            problems.push(`expected UNAUTHENTICATED, got ${code}`);
          if (changed.length) problems.push(`changed ${changed.join(', ')}`);
          if (audit.length) problems.push(`audit ${JSON.stringify(audit)}`);
        }
        record(
          results,
          {
            dimension: 'server action',
            identity,
            entry: action.exportName,
            expected: allowed ? 'allowed' : 'refused',
            actual: code ?? '?',
          },
          problems,
        );
      }
    } finally {
      saveResults('access-matrix', `actions ${identity}`, results);
      await caller.dispose();
    }
    expect(results.length).toBe(serverActions().length);
  }
});

test('pages and route handlers, requested by every role and stranger', async () => {
  for (const identity of IDENTITIES) {
    const caller = await callerFor(identity, db);
    const results: CaseResult[] = [];
    const entries = [
      ...appEntries('page').map((p) => ({ dimension: 'page', pattern: p, spec: PAGES[p] })),
      ...appEntries('route').map((r) => ({ dimension: 'route handler', pattern: r, spec: ROUTES[r] })),
    ];
    try {
      for (const { dimension, pattern, spec } of entries) {
        if (!spec || spec.permission === 'better-auth') continue;
        const allowed = permits(spec.permission, identity);
        const { url, exists } = concrete(pattern, spec.sample, 'query' in spec ? spec.query : undefined);
        await caller.restoreExpired();
        const before = await watch.current();
        let status: number;
        let location: string | null = null;
        if (pattern === '/api/events') {
          // An event stream never ends: read the status, then hang up.
          const abort = new AbortController();
          const response = await fetch(baseUrl() + url, {
            headers: { cookie: await cookieHeader(caller.context) },
            redirect: 'manual',
            signal: abort.signal,
          });
          status = response.status;
          abort.abort();
        } else {
          const response = await caller.context.get(url, { maxRedirects: 0, failOnStatusCode: false });
          status = response.status();
          location = response.headers().location ?? null;
          await response.body();
        }
        const after = await watch.current();
        const changed = DatabaseWatch.changed(before, after);
        const audit = await watch.auditSince(before);
        const actual = `HTTP ${status}${location ? ` -> ${location}` : ''}`;
        const problems: string[] = [];
        if (spec.permission === 'public') {
          if (status >= 400) problems.push('a public entry was refused');
        } else if (allowed) {
          const want = exists ? [200] : [404];
          if (!want.includes(status)) problems.push(`expected ${want.join(' or ')}`);
        } else if (isRole(identity)) {
          if (status !== 403) problems.push('expected 403');
        } else {
          const toSignIn = status >= 300 && status < 400 && new URL(location ?? '/', baseUrl()).pathname === '/sign-in';
          if (dimension === 'page' ? !toSignIn : status !== 401)
            problems.push(dimension === 'page' ? 'expected a redirect to /sign-in' : 'expected 401');
        }
        if (changed.length) problems.push(`changed ${changed.join(', ')}`);
        if (audit.length) problems.push(`audit ${JSON.stringify(audit)}`);
        record(
          results,
          { dimension, identity, entry: pattern, expected: allowed ? 'allowed' : 'refused', actual },
          problems,
        );
      }
    } finally {
      saveResults('access-matrix', `pages ${identity}`, results);
      await caller.dispose();
    }
    expect(results.length).toBe(entries.filter((e) => e.spec?.permission !== 'better-auth').length);
  }
});

test('better-auth endpoints, called by every role and stranger', async () => {
  for (const identity of IDENTITIES) {
    const caller = await callerFor(identity, db);
    const results: CaseResult[] = [];
    // A role's session of its own: on a build that still mounts them, sign-out or revoke-sessions end it.
    let own = isRole(identity) ? await signedInContext(identity) : null;
    const start = await watch.current();
    try {
      for (const endpoint of authEndpoints()) {
        const [method, path] = endpoint.split(' ') as [string, string];
        const allowed = AUTH_ALLOWED.has(endpoint);
        if (
          own &&
          !(await db.query('select 1 from keel.session where token = $1 and expires_at > now()', [own.token])).rowCount
        ) {
          await own.context.dispose();
          own = await signedInContext(identity);
        }
        const context = own?.context ?? caller.context;
        await caller.restoreExpired();
        // Every call writes a rate-limit counter, so each case pictures only the tables better-auth can write;
        // the whole database is compared once around the loop.
        const before = await watch.picture(AUTH_TABLES);
        const url = `/api/auth${path.replace(/:[a-zA-Z]+/g, 'access-matrix')}`;
        // A username of its own per identity, so the per-account lockout does not turn the answer into 429.
        const body =
          path === '/sign-in/username'
            ? { username: `matrix_nobody_${IDENTITIES.indexOf(identity)}`, password: 'not-the-password' }
            : {};
        const response = await context.fetch(url, {
          method,
          maxRedirects: 0,
          failOnStatusCode: false,
          ...(method === 'GET' ? {} : { data: body }),
        });
        const status = response.status();
        const text = await response.text();
        const after = await watch.picture(AUTH_TABLES);
        const changed = DatabaseWatch.changed(before, after);
        const audit = await watch.auditSince(before);
        const problems: string[] = [];
        if (status >= 500) problems.push(`HTTP ${status}`);
        if (!allowed) {
          if (status !== 404) problems.push('expected 404');
          if (changed.length) problems.push(`changed ${changed.join(', ')}`);
          if (audit.length) problems.push(`audit ${JSON.stringify(audit)}`);
        } else if (endpoint === 'GET /get-session') {
          const session = JSON.parse(text || 'null') as { user?: { username?: string } } | null;
          if (status !== 200) problems.push('expected 200');
          else if (isRole(identity) ? session?.user?.username !== identity : session !== null)
            problems.push(`session ${text.slice(0, 80)}`);
          if (text.includes('"token"')) problems.push('the session token reached the response body');
          if (changed.length) problems.push(`changed ${changed.join(', ')}`);
        } else if (endpoint === 'POST /sign-in/username') {
          if (status !== 401 && status !== 429) problems.push('expected 401 (or 429 once locked) for an unknown user');
        } else if (status === 404) problems.push('an endpoint the console uses answered 404');
        record(
          results,
          {
            dimension: 'better-auth endpoint',
            identity,
            entry: endpoint,
            expected: allowed ? 'allowed' : 'refused (404)',
            actual: `HTTP ${status}`,
          },
          problems,
        );
      }
      const outside = DatabaseWatch.changed(start, await watch.current()).filter((t) => !AUTH_TABLES.includes(t));
      expect.soft(outside, 'tables outside better-auth changed by its endpoints').toEqual([]);
    } finally {
      saveResults('access-matrix', `auth ${identity}`, results);
      await own?.context.dispose();
      await caller.dispose();
    }
  }
});

test('summary: cases per dimension', async () => {
  const results = loadResults('access-matrix');
  const byDimension = new Map<string, { cases: number; passed: number }>();
  for (const r of results) {
    const d = byDimension.get(r.dimension) ?? { cases: 0, passed: 0 };
    d.cases += 1;
    if (r.pass) d.passed += 1;
    byDimension.set(r.dimension, d);
  }
  const lines = [...byDimension].map(
    ([d, c]) => `${d}: ${c.cases} cases, ${c.passed} passed, ${c.cases - c.passed} failed`,
  );
  console.log(`access matrix over ${IDENTITIES.length} identities\n${lines.join('\n')}`);
  for (const r of results.filter((x) => !x.pass))
    console.log(`  FAIL ${r.dimension} ${r.entry} as ${r.identity}: expected ${r.expected}, got ${r.actual}`);
  expect(results.length).toBeGreaterThan(0);
});
