import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { admit, openFrontDoor } from '../../lib/http/front-door';

const SESSION = { cookie: 'better-auth.session_token=abc.def' };

/** What reached the stand-in for Next.js: the request headers as it saw them. */
const handedOn: IncomingHttpHeaders[] = [];
const frontDoor = openFrontDoor({ development: false });
const server = createServer((request, response) => {
  if (frontDoor(request, response)) return;
  handedOn.push({ ...request.headers });
  response.end('next');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('admit', () => {
  it('passes the public paths without a session, and everything with one', () => {
    for (const path of ['/sign-in', '/sign-in?next=%2F', '/api/health', '/api/auth/sign-in/username']) expect(admit('GET', path, {}).kind).toBe('pass');
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
    expect(navigation.kind === 'answer' && navigation.response.headers.get('location')).toBe('/sign-in?next=%2Fexecutions%3Fstatus%3DFAILED');
  });

  it('lets a metrics scraper with a bearer token through to the route, which checks it', () => {
    expect(admit('GET', '/api/metrics', { authorization: 'Bearer t' }).kind).toBe('pass');
    expect(admit('GET', '/api/metrics', { authorization: 'Basic t' }).kind).toBe('answer');
    expect(admit('GET', '/api/executions', { authorization: 'Bearer t' }).kind).toBe('answer');
  });

  it('refuses a malformed path and a foreign server action, session or not', () => {
    const malformed = admit('GET', '/api/executions/%ZZ', SESSION);
    expect(malformed.kind === 'answer' && malformed.response.status).toBe(400);
    const foreign = admit('POST', '/executions', { ...SESSION, 'next-action': 'abc', origin: 'http://evil.example', host: 'localhost:3000' });
    expect(foreign.kind === 'answer' && foreign.response.status).toBe(403);
    // A form without JavaScript posts multipart with no Next-Action header; Next.js takes it for an action too.
    const form = admit('POST', '/sign-in', { 'content-type': 'multipart/form-data; boundary=x', origin: 'http://evil.example', host: 'localhost:3000' });
    expect(form.kind === 'answer' && form.response.status).toBe(403);
    expect(admit('POST', '/executions', { ...SESSION, 'next-action': 'abc', origin: 'http://localhost:3000', host: 'localhost:3000' }).kind).toBe('pass');
  });
});

describe('the front door on a real server', () => {
  it('hands a request on with a fresh nonce and its policy, replacing any the client sent', async () => {
    const first = await fetch(`${base}/executions`, { headers: { ...SESSION, 'x-nonce': 'chosen', 'content-security-policy': "script-src 'unsafe-inline'" } });
    const second = await fetch(`${base}/executions`, { headers: SESSION });
    expect(await first.text()).toBe('next');
    const [seenFirst, seenSecond] = handedOn.slice(-2);
    expect(seenFirst!['x-nonce']).not.toBe('chosen');
    expect(seenFirst!['x-nonce']).not.toBe(seenSecond!['x-nonce']);
    for (const [response, seen] of [[first, seenFirst!], [second, seenSecond!]] as const) {
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
      expect(response.headers.get('content-security-policy')).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9+/=]+' 'strict-dynamic'/);
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('permissions-policy')).toContain('camera=()');
    }
  });

  it('leaves static files to Next.js untouched: no session asked, no nonce', async () => {
    for (const path of ['/_next/static/chunks/main.js', '/favicon.ico', '/icon.svg', '/_next/image?url=%2Ficon.svg&w=64&q=75']) {
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

  it('in development only, leaves the error overlay\'s endpoints to Next.js', () => {
    const served: string[] = [];
    const respond = (door: ReturnType<typeof openFrontDoor>, url: string) => {
      const request = { method: 'POST', url, headers: {} } as unknown as IncomingMessage;
      const response = { setHeader: () => undefined, writeHead: () => undefined, end: () => undefined, destroy: () => undefined } as unknown as ServerResponse;
      if (!door(request, response)) served.push(url);
    };
    respond(openFrontDoor({ development: true }), '/__nextjs_original-stack-frames');
    respond(frontDoor, '/__nextjs_original-stack-frames');
    respond(openFrontDoor({ development: true }), '/executions');
    expect(served).toEqual(['/__nextjs_original-stack-frames']);
  });
});
