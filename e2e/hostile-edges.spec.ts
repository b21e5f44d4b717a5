import http from 'node:http';
import { expect, test } from '@playwright/test';
import {
  appEntries,
  baseUrl,
  callAction,
  parseFlight,
  serverActions,
  signedInContext,
  type ServerActionEntry,
} from './support/access';
import { specDatabase } from './support/database';
import { DEMO_PASSWORD, sessionCookie } from './support/session';

/**
 * The hostile edges a probe of the running console found: anonymous requests that made
 * it answer 500, malformed input that widened or changed an action instead of being
 * refused, event streams that outlived their session, exports one role could hold
 * hostage, and origins compared on the host alone. Each is driven here against the
 * production build over HTTP, as the probe drove it.
 */

const ORIGIN = baseUrl();
const db = specDatabase(test);

const action = (name: string): ServerActionEntry => {
  const found = serverActions().find((a) => a.exportName === name);
  if (!found) throw new Error(`no server action ${name}`);
  return found;
};

const lastAuditId = async () =>
  Number((await db.query(`select coalesce(max(id), 0)::int as n from keel.audit_event`)).rows[0].n);
const auditSince = async (id: number) =>
  (
    await db.query(
      `select action, outcome, code, reason, actor_login from keel.audit_event where id > $1 order by id`,
      [id],
    )
  ).rows as {
    action: string;
    outcome: string;
    code: string | null;
    reason: string | null;
    actor_login: string;
  }[];

test('a NUL or another control character in any sign-in field answers 400, never 500', async () => {
  for (const field of ['username', 'password']) {
    for (const bad of ['vi\u0000ewer', 'view\u0007er', 'viewer\uD800']) {
      const body = { username: 'viewer', password: DEMO_PASSWORD, [field]: bad };
      const response = await fetch(`${ORIGIN}/api/auth/sign-in/username`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: ORIGIN },
        body: JSON.stringify(body),
      });
      expect(response.status, `${field} ${JSON.stringify(bad)}`).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'INVALID_INPUT' });
    }
  }
});

/** A raw HTTP request, so nothing adds an Origin or a cookie the probe did not send. */
function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string | number>,
  body?: Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${ORIGIN}${path}`, { method, headers, agent: false }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
    });
    // The server may answer and close before the whole of a large body is sent.
    request.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    request.end(body);
  });
}

test('a multipart post over 1 MB to any page, signed in or not, is refused as such, never with 500', async () => {
  const boundary = 'keel-e2e-boundary';
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="1_note"\r\n\r\n`),
    Buffer.alloc(1_100_000, 'x'),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const cookie = await sessionCookie('admin');
  const type = `multipart/form-data; boundary=${boundary}`;
  const cases: [string, Record<string, string | number>, number][] = [
    // The probe's: no cookie, no Origin.
    ['/sign-in', { 'content-type': type, 'content-length': body.length }, 403],
    ['/sign-in', { 'content-type': type, 'content-length': body.length, origin: ORIGIN }, 400],
    ['/settlements/dead-letters', { 'content-type': type, 'content-length': body.length, origin: ORIGIN, cookie }, 400],
    // Named as an action: too large to read at all.
    [
      '/settlements/dead-letters',
      {
        'content-type': type,
        'content-length': body.length,
        origin: ORIGIN,
        cookie,
        'next-action': action('previewBulkReplayAction').id,
      },
      413,
    ],
  ];
  for (const [path, headers, status] of cases) {
    const answer = await rawRequest('POST', path, headers, body);
    expect(answer.status, `${path} ${JSON.stringify(Object.keys(headers))}`).toBe(status);
    expect(JSON.parse(answer.body).code).toMatch(/^(FORBIDDEN|INVALID_INPUT|PAYLOAD_TOO_LARGE)$/);
  }
});

const METHODS = ['TRACE', 'PROPFIND', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACK'];

test('every method a route or page does not serve answers 405 with Allow, signed in or not', async () => {
  const cookie = await sessionCookie('admin');
  const paths = [
    ...appEntries('route').map((r) => r.replace('[...all]', 'sign-in/username').replace(/\[[^\]]+\]/g, '1')),
    ...appEntries('page').map((p) => p.replace(/\[[^\]]+\]/g, '1')),
  ];
  const failures: string[] = [];
  for (const path of paths) {
    for (const method of METHODS) {
      for (const headers of [{}, { cookie, origin: ORIGIN }] as Record<string, string>[]) {
        const answer = await rawRequest(method, path, headers);
        const allow = answer.headers.allow ?? '';
        const who = `${method} ${path} ${'cookie' in headers ? 'signed in' : 'anonymous'}`;
        // A method Node's HTTP parser does not know (TRACK) is answered 400 by Node itself, before Keel sees it.
        if (!http.METHODS.includes(method)) {
          if (answer.status !== 400) failures.push(`${who}: ${answer.status}, not Node's 400`);
        } else if (answer.status !== 405 || !/^(GET|HEAD|POST)(, (HEAD|POST))*$/.test(allow))
          failures.push(`${who}: ${answer.status} Allow ${allow}`);
      }
    }
  }
  expect(failures).toEqual([]);
  expect(paths.length).toBeGreaterThan(30);
});

test("Next.js' image optimizer is refused, anonymous or signed in, and renders nothing", async () => {
  const cookie = await sessionCookie('viewer');
  for (const headers of [{}, { cookie }] as Record<string, string>[]) {
    const answer = await rawRequest('GET', '/_next/image?url=/executions&w=64&q=75', headers);
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'NOT_FOUND' });
  }
});

test('a bulk preview whose filters are not a filter object is refused and freezes nothing', async () => {
  const { context } = await signedInContext('support');
  try {
    const preview = action('previewBulkReplayAction');
    for (const filters of ['', null, 0, [], 'reason=rpc']) {
      const jobs = Number((await db.query(`select count(*)::int as n from keel.bulk_replay`)).rows[0].n);
      const since = await lastAuditId();
      const answer = await callAction(context, preview, [{ filters, note: 'hostile preview' }]);
      expect(answer.result, JSON.stringify(filters)).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
      expect(Number((await db.query(`select count(*)::int as n from keel.bulk_replay`)).rows[0].n)).toBe(jobs);
      expect(await auditSince(since)).toEqual([
        expect.objectContaining({
          action: 'settlement.bulk_replay.preview',
          outcome: 'REFUSED',
          code: 'INVALID_INPUT',
        }),
      ]);
    }
  } finally {
    await context.dispose();
  }
});

test('an id is never read from a boolean: executionId true writes no stop request', async () => {
  const { context } = await signedInContext('operator');
  try {
    const stop = action('requestExecutionStop');
    const requests = Number(
      (await db.query(`select count(*)::int as n from oxide_batch.ob_operator_request`)).rows[0].n,
    );
    for (const executionId of [true, false, '', ' 1', '1e0', 1.5]) {
      const answer = await callAction(context, stop, [
        { executionId, operationId: `keel-e2e-bool-${String(executionId).length}` },
      ]);
      expect(answer.result, JSON.stringify(executionId)).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
    }
    expect(Number((await db.query(`select count(*)::int as n from oxide_batch.ob_operator_request`)).rows[0].n)).toBe(
      requests,
    );
  } finally {
    await context.dispose();
  }
});

/** Posts a raw action body, as the probe did, and reads the answer. */
async function rawAction(
  cookie: string,
  entry: ServerActionEntry,
  body: string | Buffer,
  contentType = 'text/plain;charset=UTF-8',
) {
  const answer = await rawRequest(
    'POST',
    entry.pagePath,
    { cookie, origin: ORIGIN, 'next-action': entry.id, 'content-type': contentType, accept: 'text/x-component' },
    Buffer.from(body),
  );
  return {
    ...answer,
    result: answer.headers['content-type']?.includes('text/x-component') ? parseFlight(answer.body) : null,
  };
}

/** Bodies Keel's clients never send: React's reference words, broken JSON, wrong shapes. */
const MALFORMED_BODIES = [
  '[{"filters":{"q":"$@0"},"note":"n"}]',
  '[{"filters":"$@0","note":"n"}]',
  '["$@1"]',
  '[{"filters":{},"note":"$K1"}]',
  '[{"filters":{},"note":"$Q1"}]',
  '[{"filters":{},"note":"$W1"}]',
  '[{"filters":{},"note":"$h1"}]',
  '[{"filters":{},"note":"$T"}]',
  '[{"filters":{},"note":"$F1"}]',
  '[{"filters":{},"note":"$B1"}]',
  '[{"filters":{},"note":"$R1"}]',
  '[{"filters":{},"note":"$n1"}]',
  '[{"filters":{},"note":"$D2026-01-01T00:00:00.000Z"}]',
  '[{"filters":{},"note":"$i1"}]',
  '[{"filters":{},"note":"$S1"}]',
  '[{"filters":{},"note":"$Y"}]',
  '[{"filters":{},"note":"$"}]',
  '[',
  '',
  'null',
  '{"filters":{},"note":"n"}',
  '"x"',
  '[{"filters":{},"note":"n"}',
  '\u0000',
  '[{"__proto__":{"filters":{}},"note":"n"}] trailing',
];

test("malformed action bodies get Keel's typed refusal, each audited, never Next.js' error marker", async () => {
  const cookie = await sessionCookie('support');
  const preview = action('previewBulkReplayAction');
  const jobs = Number((await db.query(`select count(*)::int as n from keel.bulk_replay`)).rows[0].n);
  const failures: string[] = [];
  for (const body of [...MALFORMED_BODIES, Buffer.from([0x5b, 0x22, 0xc3, 0x28, 0x22, 0x5d])]) {
    const since = await lastAuditId();
    const answer = await rawAction(cookie, preview, body);
    const audit = await auditSince(since);
    const label = JSON.stringify(body.toString()).slice(0, 60);
    if (answer.status !== 200 || answer.result?.code !== 'INVALID_INPUT')
      failures.push(`${label}: HTTP ${answer.status} ${answer.result?.code ?? answer.body.slice(0, 80)}`);
    if (/^\d+:E\{/m.test(answer.body)) failures.push(`${label}: Next.js error marker`);
    if (audit.length !== 1 || audit[0]!.outcome !== 'REFUSED' || audit[0]!.code !== 'INVALID_INPUT')
      failures.push(`${label}: audit ${JSON.stringify(audit)}`);
  }
  // A multipart form is not a body Keel sends either.
  const boundary = 'b';
  const since = await lastAuditId();
  const form = await rawAction(
    cookie,
    preview,
    `--${boundary}\r\nContent-Disposition: form-data; name="0"\r\n\r\n[{"filters":{},"note":"n"}]\r\n` +
      `--${boundary}--\r\n`,
    `multipart/form-data; boundary=${boundary}`,
  );
  expect(form.result).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
  expect(await auditSince(since)).toEqual([
    expect.objectContaining({
      outcome: 'REFUSED',
      code: 'INVALID_INPUT',
      reason: expect.stringContaining('Malformed action body'),
    }),
  ]);
  expect(failures).toEqual([]);
  expect(Number((await db.query(`select count(*)::int as n from keel.bulk_replay`)).rows[0].n)).toBe(jobs);
});

/** An open /api/events stream: resolves `ended` with the reason the server gave, once it closes. */
function openStream(cookie: string) {
  let opened: () => void = () => {};
  const open = new Promise<void>((resolve) => (opened = resolve));
  const ended = new Promise<{ reason: string | null; afterMs: number }>((resolve, reject) => {
    let text = '';
    let since = 0;
    const request = http.get(`${ORIGIN}/api/events`, { headers: { cookie }, agent: false }, (response) => {
      expect(response.statusCode).toBe(200);
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        if (since === 0) {
          since = performance.now();
          opened();
        }
      });
      response.on('end', () =>
        resolve({
          reason: /event: ended\ndata: (.*)\n/.exec(text)?.[1]
            ? (JSON.parse(/event: ended\ndata: (.*)\n/.exec(text)![1]!) as { reason: string }).reason
            : null,
          afterMs: performance.now() - since,
        }),
      );
    });
    request.on('error', reject);
  });
  return { open, ended };
}

test('an open event stream ends within seconds of sign-out, disabling or demotion', async () => {
  test.setTimeout(90_000);
  const users = ['stream.out', 'stream.off', 'stream.down'];
  const admin = await signedInContext('admin');
  try {
    const create = action('createUserAction');
    for (const username of users) {
      const answer = await callAction(admin.context, create, [
        { username, name: username, role: 'operator', password: 'stream-password-1' },
      ]);
      expect(answer.result?.ok, username).toBe(true);
    }
    const cookies = new Map<string, string>();
    for (const username of users) {
      const response = await fetch(`${ORIGIN}/api/auth/sign-in/username`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: ORIGIN },
        body: JSON.stringify({ username, password: 'stream-password-1' }),
      });
      cookies.set(
        username,
        response.headers
          .getSetCookie()
          .map((c) => c.split(';')[0]!)
          .join('; '),
      );
    }
    const streams = new Map(users.map((u) => [u, openStream(cookies.get(u)!)]));
    await Promise.all([...streams.values()].map((s) => s.open));

    const signOut = await fetch(`${ORIGIN}/api/auth/sign-out`, {
      method: 'POST',
      headers: { cookie: cookies.get('stream.out')!, origin: ORIGIN, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(signOut.status).toBe(200);
    expect(
      (
        await callAction(admin.context, action('disableUserAction'), [
          { username: 'stream.off', reason: 'e2e: stream must end' },
        ])
      ).result?.ok,
    ).toBe(true);
    expect(
      (
        await callAction(admin.context, action('changeUserRoleAction'), [
          { username: 'stream.down', role: 'viewer', expectedRole: 'operator' },
        ])
      ).result?.ok,
    ).toBe(true);

    const [out, off, down] = await Promise.all(users.map((u) => streams.get(u)!.ended));
    expect(out!.reason).toBe('SIGNED_OUT');
    // Disabling ends the user's sessions too: whichever the stream noticed first, it ended.
    expect(['DISABLED', 'SIGNED_OUT']).toContain(off!.reason);
    expect(down!.reason).toBe('ROLE_CHANGED');
  } finally {
    await admin.context.dispose();
  }
});

/** Starts a download, reads its first bytes and then holds it open without reading on. */
function heldExport(cookie: string): Promise<{ status: number; request: http.ClientRequest }> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${ORIGIN}/api/audit/export`, { headers: { cookie }, agent: false }, (response) => {
      const status = response.statusCode ?? 0;
      if (status !== 200) {
        response.resume();
        resolve({ status, request });
        return;
      }
      response.once('data', () => {
        response.pause();
        resolve({ status, request });
      });
    });
    request.on('error', reject);
  });
}

test("two low-privilege users holding two exports each leave an admin's export free", async () => {
  // Far more CSV than loopback socket buffers hold, so a download that stops reading stays open.
  const { n } = (await db.query(`select count(*)::int as n from keel.audit_event`)).rows[0] as { n: number };
  if (n < 50_000) {
    await db.query(
      `insert into keel.audit_event (at, actor_login, actor_role, action, target_kind, target_id, reason, outcome)
       select now() - interval '400 days' - make_interval(secs => i), 'e2e-filler', 'viewer', 'e2e.export_filler',
       'e2e', 'filler-' || i, repeat('x', 300), 'APPLIED'
       from generate_series(1, 60000) as i`,
    );
  }
  const [viewer, support, admin] = await Promise.all(['viewer', 'support', 'admin'].map((u) => sessionCookie(u)));
  const held = await Promise.all([viewer, viewer, support, support].map((c) => heldExport(c!)));
  try {
    expect(held.map((h) => h.status)).toEqual([200, 200, 200, 200]);
    const third = await heldExport(viewer!);
    expect(third.status).toBe(429);
    const response = await fetch(`${ORIGIN}/api/audit/export`, { headers: { cookie: admin! } });
    expect(response.status).toBe(200);
    expect((await response.text()).startsWith('id,at_utc,actor,role')).toBe(true);
  } finally {
    for (const h of held) h.request.destroy();
  }
});

test('a server action is accepted only from the exact origin, or same-origin without one', async () => {
  const cookie = await sessionCookie('support');
  const preview = action('previewBulkReplayAction');
  const post = (headers: Record<string, string>) =>
    rawRequest(
      'POST',
      preview.pagePath,
      { cookie, 'next-action': preview.id, 'content-type': 'text/plain;charset=UTF-8', ...headers },
      Buffer.from('[{"filters":{},"note":""}]'),
    );
  const port = new URL(ORIGIN).port;
  for (const origin of [
    ORIGIN.replace('http:', 'https:'),
    `http://localhost:${Number(port) + 1}`,
    'http://evil.example',
    'null',
  ]) {
    expect((await post({ origin })).status, origin).toBe(403);
  }
  expect((await post({})).status).toBe(403);
  expect((await post({ 'sec-fetch-site': 'cross-site' })).status).toBe(403);
  // From the console itself: the action runs (and refuses the empty note as bad input).
  for (const headers of [{ origin: ORIGIN }, { 'sec-fetch-site': 'same-origin' }] as Record<string, string>[]) {
    const answer = await post(headers);
    expect(answer.status).toBe(200);
    expect(parseFlight(answer.body)).toMatchObject({ ok: false, code: 'INVALID_INPUT' });
  }
});
