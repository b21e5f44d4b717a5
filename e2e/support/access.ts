import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { request as playwrightRequest, type APIRequestContext } from '@playwright/test';
import type pg from 'pg';
import { PERMISSIONS, ROLES, isRole, type Permission, type Role } from '../../lib/domain/roles';
import { DEMO_PASSWORD } from './session';

/**
 * What the access matrix and the hostile-input suite share: who calls (five roles and
 * three kinds of stranger), what there is to call (read from the build and from app/),
 * how a server action is called over HTTP as the browser calls it, and a before/after
 * picture of the database that notices any insert, update or delete.
 */

export const STRANGERS = ['no session', 'expired session', 'forged cookie'] as const;
export type Identity = Role | (typeof STRANGERS)[number];
export const IDENTITIES: readonly Identity[] = [...ROLES, ...STRANGERS];

/** Who may pass a permission: the roles PERMISSIONS lists for it, nobody else; `public` is everyone. */
export function permits(permission: Permission | 'public', identity: Identity): boolean {
  if (permission === 'public') return true;
  return isRole(identity) && (PERMISSIONS[permission] as readonly Role[]).includes(identity);
}

export const baseUrl = () => `http://localhost:${Number(process.env.KEEL_E2E_PORT ?? 3100)}`;

// ---------------------------------------------------------------------------------------------
// Callers

export interface Caller {
  identity: Identity;
  context: APIRequestContext;
  /** The session token behind the cookie (null for no session and the forged cookie's random one). */
  token: string | null;
  dispose(): Promise<void>;
}

const SESSION_COOKIE = 'better-auth.session_token';

function sessionCookie(context: { cookies: { name: string; value: string }[] }) {
  return context.cookies.find((c) => c.name.endsWith(SESSION_COOKIE));
}

/** A request context signed in through the console's own sign-in endpoint. */
export async function signedInContext(username: string): Promise<{ context: APIRequestContext; token: string }> {
  const context = await playwrightRequest.newContext({ baseURL: baseUrl(), extraHTTPHeaders: { Origin: baseUrl() } });
  const response = await context.post('/api/auth/sign-in/username', { data: { username, password: DEMO_PASSWORD } });
  if (response.status() !== 200) throw new Error(`sign-in as ${username} answered ${response.status()}`);
  const cookie = sessionCookie(await context.storageState());
  if (!cookie) throw new Error(`sign-in as ${username} set no session cookie`);
  return { context, token: decodeURIComponent(cookie.value).split('.')[0]! };
}

/**
 * A caller for each identity. The expired session is a real admin session whose
 * expires_at is moved into the past; the forged cookie is well formed (token, a dot,
 * a base64 "signature") but signed by nobody.
 */
export async function callerFor(
  identity: Identity,
  db: pg.Client,
): Promise<Caller & { restoreExpired(): Promise<void> }> {
  const noop = async () => {};
  if (isRole(identity)) {
    const { context, token } = await signedInContext(identity);
    return { identity, context, token, dispose: () => context.dispose(), restoreExpired: noop };
  }
  if (identity === 'no session') {
    const context = await playwrightRequest.newContext({ baseURL: baseUrl(), extraHTTPHeaders: { Origin: baseUrl() } });
    return { identity, context, token: null, dispose: () => context.dispose(), restoreExpired: noop };
  }
  if (identity === 'forged cookie') {
    const token = randomBytes(24).toString('base64url').slice(0, 32);
    const value = encodeURIComponent(`${token}.${randomBytes(32).toString('base64')}`);
    const context = await playwrightRequest.newContext({
      baseURL: baseUrl(),
      extraHTTPHeaders: { Origin: baseUrl() },
      storageState: {
        cookies: [
          {
            name: SESSION_COOKIE,
            value,
            domain: 'localhost',
            path: '/',
            expires: -1,
            httpOnly: true,
            secure: false,
            sameSite: 'Lax',
          },
        ],
        origins: [],
      },
    });
    return { identity, context, token, dispose: () => context.dispose(), restoreExpired: noop };
  }
  const { context, token } = await signedInContext('admin');
  const row = await db.query(
    `update keel.session set expires_at = now() - interval '1 minute' where token = $1
     returning row_to_json(session.*) as row`,
    [token],
  );
  const saved = row.rows[0]?.row;
  if (!saved) throw new Error('the expired session row was not found');
  // better-auth deletes an expired session when it sees it; put it back before each call.
  const restoreExpired = async () => {
    // Only when it is gone: an insert takes a transaction id even when it inserts nothing.
    if ((await db.query('select 1 from keel.session where token = $1', [token])).rowCount) return;
    await db.query(
      `insert into keel.session select * from json_populate_record(null::keel.session, $1) on conflict do nothing`,
      [saved],
    );
  };
  return { identity, context, token, dispose: () => context.dispose(), restoreExpired };
}

/** The Cookie header a context sends, for the few calls made with fetch (the event stream). */
export async function cookieHeader(context: APIRequestContext): Promise<string> {
  return (await context.storageState()).cookies.map((c) => `${c.name}=${c.value}`).join('; ');
}

// ---------------------------------------------------------------------------------------------
// What there is to call

export interface ServerActionEntry {
  id: string;
  /** `app/actions/recovery.ts#proposeTakeover` */
  key: string;
  exportName: string;
  /** A page that serves the action, to POST to. */
  pagePath: string;
}

const toUrlPath = (appPath: string) =>
  '/' +
  appPath
    .split('/')
    .filter((s) => !/^\(.*\)$/.test(s))
    .join('/');

/** Every server action of the production build, from its server reference manifest. */
export function serverActions(): ServerActionEntry[] {
  const manifest = JSON.parse(readFileSync('.next/server/server-reference-manifest.json', 'utf8')) as {
    node: Record<string, { workers: Record<string, unknown>; filename?: string; exportedName?: string }>;
  };
  return Object.entries(manifest.node).map(([id, entry]) => {
    const pages = Object.keys(entry.workers)
      .filter((w) => w.startsWith('app/') && w.endsWith('/page'))
      .map((w) => toUrlPath(w.slice('app/'.length, -'/page'.length)));
    // A static page when there is one; a dynamic segment gets a harmless value.
    const page = pages.find((p) => !p.includes('[')) ?? pages[0] ?? '/';
    const exportName = entry.exportedName ?? '?';
    return {
      id,
      key: `${entry.filename ?? '?'}#${exportName}`,
      exportName,
      pagePath: page.replace(/\[[^\]]+\]/g, '1'),
    };
  });
}

/** Route patterns of app/**\/page.tsx and app/**\/route.ts, route groups removed: `/executions/[id]`. */
export function appEntries(kind: 'page' | 'route'): string[] {
  const file = kind === 'page' ? 'page.tsx' : 'route.ts';
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === file)
        found.push(toUrlPath(relative('app', dir).split(sep).join('/')).replace(/\/$/, '') || '/');
    }
  };
  walk('app');
  return found.sort();
}

// ---------------------------------------------------------------------------------------------
// Calling a server action over HTTP, as the browser does

export interface ActionAnswer {
  status: number;
  /** The action's result union when the server ran it. */
  result: { ok: boolean; code?: string; value?: unknown } | null;
  location: string | null;
  body: string;
}

/** Parses a React flight answer to a server action: the root row points at the result row. */
export function parseFlight(body: string): ActionAnswer['result'] {
  const rows = new Map<string, string>();
  for (const line of body.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) rows.set(line.slice(0, colon), line.slice(colon + 1));
  }
  const root = rows.get('0');
  if (!root) return null;
  try {
    const parsed = JSON.parse(root) as { a?: unknown };
    let value = parsed.a;
    if (typeof value === 'string' && value.startsWith('$@')) value = JSON.parse(rows.get(value.slice(2)) ?? 'null');
    return value && typeof value === 'object' && 'ok' in value ? (value as ActionAnswer['result']) : null;
  } catch {
    return null;
  }
}

export async function callAction(
  context: APIRequestContext,
  action: ServerActionEntry,
  args: unknown[],
  headers: Record<string, string> = {},
): Promise<ActionAnswer> {
  const response = await context.post(action.pagePath, {
    headers: {
      'Next-Action': action.id,
      'Content-Type': 'text/plain;charset=UTF-8',
      Accept: 'text/x-component',
      ...headers,
    },
    data: JSON.stringify(args),
    maxRedirects: 0,
    failOnStatusCode: false,
  });
  const body = await response.text();
  const type = response.headers()['content-type'] ?? '';
  return {
    status: response.status(),
    result: type.includes('text/x-component') ? parseFlight(body) : null,
    location: response.headers().location ?? null,
    body,
  };
}

// ---------------------------------------------------------------------------------------------
// The database before and after

/**
 * Tables whose rows change without anyone calling Keel: the metric sampler's samples
 * and the expired lease grants it deletes (every 15 s), better-auth's rate-limit counters
 * (every /api/auth request) and the webhook worker's delivery attempts (retries of events
 * earlier specs caused). A new webhook event still shows in keel.webhook_event, written by
 * the changing transaction. No console action writes a lease grant: only a claim does.
 */
const BACKGROUND_TABLES = new Set([
  'keel.metric_sample',
  'settle.lease_grants',
  'keel.rate_limit',
  'keel.webhook_delivery',
  // The rate rollup (lib/workers/rate-rollup.ts) counts closed minutes on the sampler's beat.
  'keel.rate_minute',
  'keel.rate_hour',
  // An audit export's slot, held while its CSV streams and released just after the last byte
  // (lib/adapters/export-slots.ts): gone a moment after the response, not a change anyone made.
  'keel.export_slot',
]);
/** Sessions count while live: better-auth deletes an expired one when it is presented. */
const ROW_FILTER: Record<string, string> = {
  'keel.session': 'where expires_at > now()',
  // The rollup's own progress row moves in the background; every other meta row still counts.
  'keel.meta': "where key <> 'rate_rollup'",
};

export interface Picture {
  tables: Map<string, string>;
  lastAuditId: number;
}

export interface AuditRow {
  id: number;
  actor_login: string;
  action: string;
  outcome: string;
  code: string | null;
  request_id: string | null;
}

export class DatabaseWatch {
  private tables: string[] = [];
  private last: { xmax: string; picture: Picture } | null = null;
  constructor(readonly db: pg.Client) {}

  /**
   * The current picture. Every write takes a transaction id, so while the next id to
   * assign has not moved, nothing changed and the last picture still holds (it costs
   * a scan of every table; this check costs nothing).
   */
  async current(): Promise<Picture> {
    const { rows } = await this.db.query<{ xmax: string }>(
      'select pg_snapshot_xmax(pg_current_snapshot())::text as xmax',
    );
    const xmax = rows[0]!.xmax;
    if (this.last?.xmax === xmax) return this.last.picture;
    const picture = await this.picture();
    this.last = { xmax, picture };
    return picture;
  }

  async init(): Promise<void> {
    const { rows } = await this.db.query<{ name: string }>(
      `select table_schema || '.' || table_name as name from information_schema.tables
        where table_schema in ('keel', 'settle', 'oxide_batch') and table_type = 'BASE TABLE' order by 1`,
    );
    this.tables = rows.map((r) => r.name).filter((t) => !BACKGROUND_TABLES.has(t));
  }

  /** Each table's row count and newest row version (xmin): any insert, update or delete moves one. */
  async picture(only?: readonly string[]): Promise<Picture> {
    const sql = (only ?? this.tables)
      .map((t) => {
        const [schema, name] = t.split('.');
        return `select '${t}' as t, count(*)::text || '/' || coalesce(max(xmin::text::bigint), 0)::text as v
                from "${schema}"."${name}" ${ROW_FILTER[t] ?? ''}`;
      })
      .join(' union all ');
    const [{ rows }, audit] = await Promise.all([
      this.db.query<{ t: string; v: string }>(sql),
      this.db.query<{ id: string }>('select coalesce(max(id), 0)::text as id from keel.audit_event'),
    ]);
    return { tables: new Map(rows.map((r) => [r.t, r.v])), lastAuditId: Number(audit.rows[0]!.id) };
  }

  /** Tables other than the audit log that changed between two pictures. */
  static changed(before: Picture, after: Picture): string[] {
    return [...after.tables.keys()].filter(
      (t) => t !== 'keel.audit_event' && before.tables.get(t) !== after.tables.get(t),
    );
  }

  async auditSince(before: Picture): Promise<AuditRow[]> {
    const { rows } = await this.db.query<AuditRow>(
      'select id::int, actor_login, action, outcome, code, request_id from keel.audit_event where id > $1 order by id',
      [before.lastAuditId],
    );
    return rows;
  }
}

// ---------------------------------------------------------------------------------------------
// Results, kept per test so a summary survives Playwright's worker restarts

export interface CaseResult {
  dimension: string;
  identity: string;
  entry: string;
  expected: string;
  actual: string;
  pass: boolean;
}

export function saveResults(suite: string, testName: string, results: CaseResult[]): void {
  const dir = join('.keel', 'reports', suite);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${testName.replace(/[^a-z0-9]+/gi, '-')}.json`), JSON.stringify(results, null, 1));
}

export function loadResults(suite: string): CaseResult[] {
  const dir = join('.keel', 'reports', suite);
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  } catch {
    return [];
  }
  return files.flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as CaseResult[]);
}
