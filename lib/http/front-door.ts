import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { getSessionCookie } from 'better-auth/cookies';
import { ACTION_BODY_LIMIT_BYTES, actionBodyProblem, REFUSED_BODY_HEADER } from './action-body';
import {
  refuseForeignOrigin,
  refuseMalformedPath,
  refuseMethod,
  refusePagePost,
  type GuardedRequest,
} from './request-guards';
import { allowedMethods, FILE_METHODS, type RouteMethods } from './route-methods';
import { BASELINE_HEADERS, contentSecurityPolicy, createNonce } from './security-headers';

/** Reached without a session: the sign-in page, the health check and the sign-in endpoints. */
const PUBLIC_PATHS = ['/sign-in', '/api/health', '/api/auth'];

/** Files Next.js serves as they are; next.config.ts gives them the static policy. */
const FILE_PATHS = ['/favicon.ico', '/icon.svg'];
const FILE_TREE = '/_next/static/';
/** Next.js' image optimizer: Keel serves no images through it, and it would render any page it is pointed at. */
const IMAGE_OPTIMIZER = '/_next/image';

/** `keel dev` only: the development overlay's own endpoints, which Next.js answers itself. */
const DEVELOPMENT_PREFIX = '/__nextjs_';

const isFilePath = (pathname: string) => pathname.startsWith(FILE_TREE) || FILE_PATHS.includes(pathname);
const isPublicPath = (pathname: string) =>
  PUBLIC_PATHS.some((path) => pathname === path || pathname.startsWith(`${path}/`));

const headerText = (value: string | string[] | undefined): string | null =>
  value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;

/** A Node request as the guards read it. */
function guardedView(method: string, headers: IncomingHttpHeaders): GuardedRequest {
  return {
    method,
    headers: {
      get: (name) => headerText(headers[name.toLowerCase()]),
      has: (name) => headers[name.toLowerCase()] !== undefined,
    },
  };
}

/**
 * The request target as Next.js routes it: resolved against the origin, dot segments
 * removed, percent-encoding kept. Null when it does not parse.
 */
function parseTarget(target: string | undefined): URL | null {
  const raw = target ?? '/';
  try {
    return new URL(raw.startsWith('/') ? `http://localhost${raw}` : raw, 'http://localhost');
  } catch {
    return null;
  }
}

function hasSessionCookie(headers: IncomingHttpHeaders): boolean {
  const cookie = headerText(headers.cookie);
  if (!cookie) return false;
  try {
    return getSessionCookie(new Headers([['cookie', cookie]])) !== null;
  } catch {
    return false; // a value no Headers accepts carries no session better-auth would read
  }
}

/** What the front door decided: answer the request itself, or hand it on to Next.js. */
export type Admission = { kind: 'answer'; response: Response } | { kind: 'pass' };

/**
 * The early, optimistic gate, on the request as it arrived: without a session cookie,
 * pages go to sign-in and the API answers 401. Every page, handler and action still
 * verifies the session itself.
 */
export function admit(
  method: string,
  target: string | undefined,
  headers: IncomingHttpHeaders,
  policy: RequestPolicy,
): Admission {
  return admitParsed(method, parseTarget(target), headers, policy);
}

/** What the front door checks a request against besides the session. */
export interface RequestPolicy {
  /** Origins a state-changing request may come from: scheme, host and port, exactly. */
  origins: readonly string[];
  /** The methods each route handler answers. */
  routes: RouteMethods;
}

function admitParsed(method: string, url: URL | null, headers: IncomingHttpHeaders, policy: RequestPolicy): Admission {
  if (url === null) {
    return {
      kind: 'answer',
      response: Response.json(
        { code: 'INVALID_INPUT', message: 'The request address does not parse.' },
        { status: 400, headers: { 'Cache-Control': 'no-store' } },
      ),
    };
  }
  const { pathname } = url;
  const request = guardedView(method, headers);
  const allowed = allowedMethods(policy.routes, pathname) ?? FILE_METHODS;
  const refused =
    refuseMalformedPath(pathname) ??
    refuseMethod(method, allowed) ??
    refuseForeignOrigin(request, policy.origins) ??
    refusePagePost(request, pathname);
  if (refused) return { kind: 'answer', response: refused };
  if (isPublicPath(pathname) || hasSessionCookie(headers)) return { kind: 'pass' };
  // A metrics scraper authenticates with a bearer token, which the route checks.
  if (pathname === '/api/metrics' && headerText(headers.authorization)?.startsWith('Bearer ')) return { kind: 'pass' };
  if (pathname.startsWith('/api/')) {
    return {
      kind: 'answer',
      response: Response.json({ code: 'UNAUTHENTICATED', message: 'Sign in first.' }, { status: 401 }),
    };
  }
  // `_rsc` is the client router's cache-buster, not part of the address the user was on.
  url.searchParams.delete('_rsc');
  const location =
    pathname === '/' ? '/sign-in' : `/sign-in?${new URLSearchParams({ next: pathname + url.search }).toString()}`;
  return { kind: 'answer', response: new Response(location, { status: 307, headers: { Location: location } }) };
}

async function send(response: ServerResponse, answer: Response, policy: string): Promise<void> {
  const body = Buffer.from(await answer.arrayBuffer());
  response.writeHead(answer.status, {
    ...BASELINE_HEADERS,
    'Content-Security-Policy': policy,
    ...Object.fromEntries(answer.headers),
    'Content-Length': String(body.byteLength),
  });
  response.end(body);
}

const tooLarge = () =>
  Response.json(
    { code: 'PAYLOAD_TOO_LARGE', message: `A server action takes at most ${ACTION_BODY_LIMIT_BYTES / 1024} KiB.` },
    { status: 413, headers: { 'Cache-Control': 'no-store', Connection: 'close' } },
  );

/** The whole body, or null once it passes `limit` bytes (the rest is not read). */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | null> {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.removeAllListeners('data');
        request.pause();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/** Next.js' per-request metadata: a body stashed here is decoded instead of the request stream (its `actionBody`). */
const NEXT_REQUEST_META = Symbol.for('NextInternalRequestMeta');

/**
 * A server action's body, read here in full (at most ACTION_BODY_LIMIT_BYTES) and
 * checked before React decodes it. A body Keel's clients never send is replaced by an
 * empty argument list and the problem named in REFUSED_BODY_HEADER, so the action itself
 * answers INVALID_INPUT and audits the refusal (lib/server/action.ts). Returns the answer
 * for a body too large, or null once the request may go on.
 */
async function checkActionBody(request: IncomingMessage): Promise<Response | null> {
  const body = await readBody(request, ACTION_BODY_LIMIT_BYTES);
  if (body === null) return tooLarge();
  const problem = actionBodyProblem(headerText(request.headers['content-type']), body);
  const meta = ((request as unknown as Record<symbol, Record<string, unknown> | undefined>)[NEXT_REQUEST_META] ??= {});
  if (problem === null) {
    meta.actionBody = body;
    return null;
  }
  request.headers[REFUSED_BODY_HEADER] = problem;
  request.headers['content-type'] = 'text/plain;charset=UTF-8';
  request.headers['content-length'] = '2';
  meta.actionBody = Buffer.from('[]');
  return null;
}

/**
 * Keel's HTTP server runs this on every request before Next.js sees it (lib/cli/server.mjs).
 * Pages and routes get a fresh nonce and the policy naming it: Next.js reads the nonce
 * from the request's policy header and puts it on its own scripts, and the layout reads
 * `x-nonce` for the theme script (docs/security.md, "Headers"); any copy a client sent is
 * replaced. Static files pass untouched. Resolves true when it answered the request itself.
 */
export function openFrontDoor(
  options: { development: boolean } & RequestPolicy,
): (request: IncomingMessage, response: ServerResponse) => Promise<boolean> {
  return async (request, response) => {
    delete request.headers[REFUSED_BODY_HEADER];
    const url = parseTarget(request.url);
    const method = request.method ?? 'GET';
    const nonce = createNonce();
    const policy = contentSecurityPolicy(nonce, options.development);
    const answer = (refusal: Response) => {
      send(response, refusal, policy).catch(() => response.destroy());
      return true;
    };
    if (url !== null && url.pathname === IMAGE_OPTIMIZER) {
      return answer(
        Response.json(
          { code: 'NOT_FOUND', message: 'Keel serves no images through the image optimizer.' },
          { status: 404, headers: { 'Cache-Control': 'no-store' } },
        ),
      );
    }
    if (
      url !== null &&
      (isFilePath(url.pathname) || (options.development && url.pathname.startsWith(DEVELOPMENT_PREFIX)))
    ) {
      const refused = options.development ? null : refuseMethod(method, FILE_METHODS);
      return refused ? answer(refused) : false;
    }
    const admission = admitParsed(method, url, request.headers, options);
    if (admission.kind === 'answer') return answer(admission.response);
    if (method === 'POST' && request.headers['next-action'] !== undefined) {
      const refused = await checkActionBody(request);
      if (refused) {
        answer(refused);
        // What is left of a body too large is not read: the connection closes after the answer.
        response.on('finish', () => request.destroy());
        return true;
      }
    }
    request.headers['x-nonce'] = nonce;
    request.headers['content-security-policy'] = policy;
    response.setHeader('Content-Security-Policy', policy);
    return false;
  };
}
