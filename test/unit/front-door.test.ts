import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { ACTION_BODY_LIMIT_BYTES, REFUSED_BODY_HEADER } from '../../lib/http/action-body';
import { admit as admitWith, openFrontDoor, type RequestPolicy } from '../../lib/http/front-door';
import { readRouteMethods } from '../../lib/http/route-methods';

const SESSION = { cookie: 'better-auth.session_token=abc.def' };
const ORIGIN = 'http://localhost:3000';
const POLICY: RequestPolicy = { origins: [ORIGIN, 'http://127.0.0.1:3000'], routes: readRouteMethods(process.cwd()) };
const admit = (method: string, target: string, headers: IncomingHttpHeaders) =>
  admitWith(method, target, headers, POLICY);

/** What reached the stand-in for Next.js: the request headers as it saw them, and the action body stashed for it. */
const handedOn: IncomingHttpHeaders[] = [];
const actionBodies: (string | undefined)[] = [];
const NEXT_REQUEST_META = Symbol.for('NextInternalRequestMeta');
const frontDoor = openFrontDoor({ development: false, ...POLICY });
const server = createServer((request, response) => {
  void frontDoor(request, response).then((answered) => {
    if (answered) return;
    handedOn.push({ ...request.headers });
    const meta = (request as unknown as Record<symbol, { actionBody?: Buffer } | undefined>)[NEXT_REQUEST_META];
    actionBodies.push(meta?.actionBody?.toString('utf8'));
    response.end('next');
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('admit', () => {
  it('passes the public paths without a session, and everything with one', () => {
    for (const path of ['/sign-in', '/sign-in?next=%2F', '/api/health', '/api/auth/sign-in/username'])
      expect(admit('GET', path, {}).kind).toBe('pass');
    for (const path of ['/', '/executions', '/api/executions', '/settlements/dead-letters?reason=rpc']) {
      expect(admit('GET', path, SESSION).kind).toBe('pass');
      expect(admit('GET', path, { cookie: `__Secure-${SESSION.cookie}` }).kind).toBe('pass');
    }
    // A path that only starts like a public one is not public.
    expect(admit('GET', '/sign-inx', {}).kind).toBe('answer');
    expect(admit('GET', '/api/healthz', {}).kind).toBe('answer');
  });

  it('answers the API 401 and sends pages to sign-in, remembering where they were going', async () => {
    const api = admit('GET', '/api/executions?status=FAILED', { cookie: 'other=1' });
    if (api.kind !== 'answer') throw new Error('expected an answer');
    expect(api.response.status).toBe(401);
    expect(await api.response.json()).toEqual({ code: 'UNAUTHENTICATED', message: 'Sign in first.' });
    const page = admit('GET', '/executions?status=FAILED', {});
    if (page.kind !== 'answer') throw new Error('expected an answer');
    expect(page.response.status).toBe(307);
    expect(page.response.headers.get('location')).toBe('/sign-in?next=%2Fexecutions%3Fstatus%3DFAILED');
    const root = admit('GET', '/', {});
    expect(root.kind === 'answer' && root.response.headers.get('location')).toBe('/sign-in');
    // Dot segments are resolved as Next.js resolves them before routing.
    expect(admit('GET', '/sign-in/../api/executions', {}).kind).toBe('answer');
    // The client router's cache-buster is not part of where the user was going.
    const navigation = admit('GET', '/executions?status=FAILED&_rsc=abc', { rsc: '1' });
    expect(navigation.kind === 'answer' && navigation.response.headers.get('location')).toBe(
      '/sign-in?next=%2Fexecutions%3Fstatus%3DFAILED',
    );
  });

  it('lets a metrics scraper with a bearer token through to the route, which checks it', () => {
    expect(admit('GET', '/api/metrics', { authorization: 'Bearer t' }).kind).toBe('pass');
    expect(admit('GET', '/api/metrics', { authorization: 'Basic t' }).kind).toBe('answer');
    expect(admit('GET', '/api/executions', { authorization: 'Bearer t' }).kind).toBe('answer');
  });

  it('refuses a malformed path and a foreign server action, session or not', () => {
    const malformed = admit('GET', '/api/executions/%ZZ', SESSION);
    expect(malformed.kind === 'answer' && malformed.response.status).toBe(400);
    const foreign = admit('POST', '/executions', {
      ...SESSION,
      'next-action': 'abc',
      origin: 'http://evil.example',
      host: 'localhost:3000',
    });
    expect(foreign.kind === 'answer' && foreign.response.status).toBe(403);
    // A form without JavaScript posts multipart with no Next-Action header; Next.js takes it for an action too.
    const form = admit('POST', '/sign-in', {
      'content-type': 'multipart/form-data; boundary=x',
      origin: 'http://evil.example',
      host: 'localhost:3000',
    });
    expect(form.kind === 'answer' && form.response.status).toBe(403);
    expect(
      admit('POST', '/executions', {
        ...SESSION,
        'next-action': 'abc',
        origin: 'http://localhost:3000',
        host: 'localhost:3000',
      }).kind,
    ).toBe('pass');
  });

  const status = (method: string, target: string, headers: IncomingHttpHeaders) => {
    const admission = admit(method, target, headers);
    return admission.kind === 'answer' ? admission.response.status : 'pass';
  };

  it("compares a change's Origin with the console's on scheme, host and port, and wants one", () => {
    const action = { ...SESSION, 'next-action': 'abc', host: 'localhost:3000' };
    expect(status('POST', '/executions', { ...action, origin: ORIGIN })).toBe('pass');
    expect(status('POST', '/executions', { ...action, origin: 'http://127.0.0.1:3000' })).toBe('pass');
    // Next.js compares the host only: these passed it.
    expect(status('POST', '/executions', { ...action, origin: 'https://localhost:3000' })).toBe(403);
    expect(status('POST', '/executions', { ...action, origin: 'http://localhost:3001' })).toBe(403);
    expect(status('POST', '/executions', { ...action, origin: 'http://localhost:3000/executions' })).toBe(403);
    expect(status('POST', '/executions', { ...action, origin: 'null' })).toBe(403);
    // No Origin: only a browser's own word that it is same-origin lets it through.
    expect(status('POST', '/executions', action)).toBe(403);
    expect(status('POST', '/executions', { ...action, 'sec-fetch-site': 'cross-site' })).toBe(403);
    expect(status('POST', '/executions', { ...action, 'sec-fetch-site': 'same-origin' })).toBe('pass');
    // Sign-in and sign-out are changes too; reads are not.
    expect(status('POST', '/api/auth/sign-in/username', {})).toBe(403);
    expect(status('POST', '/api/auth/sign-in/username', { origin: 'https://localhost:3000' })).toBe(403);
    expect(status('POST', '/api/auth/sign-in/username', { origin: ORIGIN })).toBe('pass');
    expect(status('GET', '/api/executions', SESSION)).toBe('pass');
  });

  it('answers a method a path does not serve 405 with Allow, signed in or not', async () => {
    for (const [method, path, headers] of [
      ['TRACE', '/api/health', {}],
      ['TRACE', '/api/auth/sign-in/username', {}],
      ['PUT', '/api/auth/sign-in/username', { origin: ORIGIN }],
      ['TRACE', '/api/executions', SESSION],
      ['DELETE', '/api/executions/12', { ...SESSION, origin: ORIGIN }],
      ['PROPFIND', '/executions', SESSION],
      ['OPTIONS', '/api/metrics', {}],
      ['CONNECT', '/sign-in', {}],
    ] as const) {
      const admission = admit(method, path, headers);
      if (admission.kind !== 'answer') throw new Error(`${method} ${path} passed`);
      expect(admission.response.status, `${method} ${path}`).toBe(405);
      expect((await admission.response.json()).code).toBe('METHOD_NOT_ALLOWED');
    }
    const allow = (path: string) => {
      const admission = admit('TRACE', path, SESSION);
      return admission.kind === 'answer' ? admission.response.headers.get('allow') : null;
    };
    expect(allow('/api/health')).toBe('GET, HEAD');
    expect(allow('/api/auth/get-session')).toBe('GET, HEAD, POST');
    expect(allow('/api/settlements/receipts/r-1')).toBe('GET, HEAD');
    expect(allow('/executions/12')).toBe('GET, HEAD, POST');
    // A path no handler serves is left to Next.js' 404 for the methods it knows.
    expect(status('GET', '/api/nothing-here', SESSION)).toBe('pass');
    expect(status('TRACE', '/api/nothing-here', SESSION)).toBe(405);
  });

  it('refuses a POST to a page that names no server action', async () => {
    const form = admit('POST', '/sign-in', { 'content-type': 'multipart/form-data; boundary=x', origin: ORIGIN });
    expect(form.kind === 'answer' && form.response.status).toBe(400);
    expect(form.kind === 'answer' && (await form.response.json()).code).toBe('INVALID_INPUT');
    expect(
      status('POST', '/executions', {
        ...SESSION,
        'content-type': 'application/x-www-form-urlencoded',
        origin: ORIGIN,
      }),
    ).toBe(400);
  });
});

describe('the front door on a real server', () => {
  it('hands a request on with a fresh nonce and its policy, replacing any the client sent', async () => {
    const first = await fetch(`${base}/executions`, {
      headers: { ...SESSION, 'x-nonce': 'chosen', 'content-security-policy': "script-src 'unsafe-inline'" },
    });
    const second = await fetch(`${base}/executions`, { headers: SESSION });
    expect(await first.text()).toBe('next');
    const [seenFirst, seenSecond] = handedOn.slice(-2);
    expect(seenFirst!['x-nonce']).not.toBe('chosen');
    expect(seenFirst!['x-nonce']).not.toBe(seenSecond!['x-nonce']);
    for (const [response, seen] of [
      [first, seenFirst!],
      [second, seenSecond!],
    ] as const) {
      const policy = response.headers.get('content-security-policy');
      expect(policy).toContain(`'nonce-${seen['x-nonce']}'`);
      expect(seen['content-security-policy']).toBe(policy);
    }
  });

  it('answers what it refuses itself, with the headers every response carries', async () => {
    const refused = await fetch(`${base}/api/executions`);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toContain('application/json');
    expect(await refused.json()).toEqual({ code: 'UNAUTHENTICATED', message: 'Sign in first.' });
    const redirected = await fetch(`${base}/audit?q=x`, { redirect: 'manual' });
    expect(redirected.status).toBe(307);
    expect(redirected.headers.get('location')).toBe('/sign-in?next=%2Faudit%3Fq%3Dx');
    for (const response of [refused, redirected]) {
      expect(response.headers.get('content-security-policy')).toMatch(
        /script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/,
      );
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('permissions-policy')).toContain('camera=()');
    }
  });

  it('leaves static files to Next.js untouched: no session asked, no nonce', async () => {
    for (const path of ['/_next/static/chunks/main.js', '/favicon.ico', '/icon.svg']) {
      const before = handedOn.length;
      const file = await fetch(`${base}${path}`, { headers: { 'x-nonce': 'chosen' } });
      expect(await file.text()).toBe('next');
      expect(file.headers.get('content-security-policy')).toBeNull();
      expect(handedOn[before]!['x-nonce']).toBe('chosen');
    }
    // Only those files: a path that merely starts like one is a page like any other.
    for (const path of ['/icon.svg.x', '/favicon.ico/x', '/_next/staticx']) {
      const gated = await fetch(`${base}${path}`, { headers: { 'x-nonce': 'chosen' }, redirect: 'manual' });
      expect(gated.status).toBe(307);
    }
  });

  it("in development only, leaves the error overlay's endpoints to Next.js", async () => {
    const served: string[] = [];
    const respond = async (door: ReturnType<typeof openFrontDoor>, url: string) => {
      const request = { method: 'POST', url, headers: {} } as unknown as IncomingMessage;
      const response = {
        setHeader: () => undefined,
        writeHead: () => undefined,
        end: () => undefined,
        destroy: () => undefined,
      } as unknown as ServerResponse;
      if (!(await door(request, response))) served.push(url);
    };
    await respond(openFrontDoor({ development: true, ...POLICY }), '/__nextjs_original-stack-frames');
    await respond(frontDoor, '/__nextjs_original-stack-frames');
    await respond(openFrontDoor({ development: true, ...POLICY }), '/executions');
    expect(served).toEqual(['/__nextjs_original-stack-frames']);
  });

  it("refuses Next.js' image optimizer, which would render any page it is pointed at", async () => {
    for (const headers of [{}, SESSION]) {
      const before = handedOn.length;
      const image = await fetch(`${base}/_next/image?url=/executions&w=64&q=75`, { headers });
      expect(image.status).toBe(404);
      expect((await image.json()).code).toBe('NOT_FOUND');
      expect(handedOn.length).toBe(before);
    }
  });

  const postAction = (body: BodyInit, headers: Record<string, string> = {}) =>
    fetch(`${base}/settlements/dead-letters`, {
      method: 'POST',
      headers: {
        ...SESSION,
        origin: ORIGIN,
        'next-action': 'abc',
        'content-type': 'text/plain;charset=UTF-8',
        [REFUSED_BODY_HEADER]: 'chosen',
        ...headers,
      },
      body,
    });

  it('hands a well-formed action body on as it came, dropping a refusal header a client sent', async () => {
    const body = JSON.stringify([{ note: '$$dollar', filters: {}, missing: '$undefined', n: '$-0' }]);
    const response = await postAction(body);
    expect(await response.text()).toBe('next');
    expect(actionBodies.at(-1)).toBe(body);
    expect(handedOn.at(-1)![REFUSED_BODY_HEADER]).toBeUndefined();
  });

  it('replaces a body Keel never sends with no arguments and names the problem for the action to refuse', async () => {
    const boundary = 'x-boundary';
    const multipart = `--${boundary}\r\nContent-Disposition: form-data; name="0"\r\n\r\n["$K1"]\r\n--${boundary}--\r\n`;
    for (const [body, headers, problem] of [
      [JSON.stringify([{ filters: { q: '$@0' }, note: 'n' }]), {}, 'REFERENCE'],
      [JSON.stringify([{ filters: '$Q1', note: 'n' }]), {}, 'REFERENCE'],
      ['[{"filters":', {}, 'NOT_JSON'],
      [JSON.stringify({ filters: {} }), {}, 'NOT_AN_ARGUMENT_LIST'],
      [Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]), {}, 'NOT_JSON'],
      [multipart, { 'content-type': `multipart/form-data; boundary=${boundary}` }, 'NOT_TEXT'],
    ] as const) {
      const response = await postAction(body as BodyInit, headers);
      expect(await response.text()).toBe('next');
      expect(handedOn.at(-1)![REFUSED_BODY_HEADER]).toBe(problem);
      expect(handedOn.at(-1)!['content-type']).toBe('text/plain;charset=UTF-8');
      expect(actionBodies.at(-1)).toBe('[]');
    }
  });

  it('answers an action body over the limit 413 without handing it on, declared or streamed', async () => {
    const before = handedOn.length;
    const big = 'x'.repeat(ACTION_BODY_LIMIT_BYTES + 1);
    const declared = await postAction(JSON.stringify([big]));
    expect(declared.status).toBe(413);
    expect((await declared.json()).code).toBe('PAYLOAD_TOO_LARGE');
    const chunks = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 17; i += 1) controller.enqueue(new TextEncoder().encode('y'.repeat(64 * 1024)));
        controller.close();
      },
    });
    const streamed = await fetch(`${base}/settlements/dead-letters`, {
      method: 'POST',
      headers: { ...SESSION, origin: ORIGIN, 'next-action': 'abc', 'content-type': 'text/plain;charset=UTF-8' },
      body: chunks,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(handedOn.length).toBe(before);
  });
});
