import 'server-only';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { can, type Permission } from '../domain/roles';
import { isDatabaseBusy } from '../db/client';
import type { Actor } from '../domain/actor';
import { checkPathSegment } from '../domain/path-segment';
import { logger } from '../observability/logger';
import { parseInput } from './parse-input';
import { withRequestId } from '../observability/request-context';
import { loggableError } from '../observability/safe-error';
import { recordApiRequest, routePattern } from '../observability/metrics';
import { isPreparedJson, liveReadActor, sharedAnswer } from './live-reads';
import { currentActor } from './session';

const NO_STORE = { 'Cache-Control': 'no-store' };

/**
 * The one wrapper for read API route handlers: session, role, query and path params
 * parsed with zod (`options.params`), JSON out. Nothing is read before all pass.
 * Unexpected errors are logged with a request id and answered without detail.
 */
export function apiRoute<S extends z.ZodType, P extends z.ZodType = z.ZodType<Record<string, never>>, C = unknown>(
  permission: Permission,
  querySchema: S,
  handler: (actor: Actor, query: z.output<S>, context: C & { request: Request; path: z.output<P> }) => Promise<unknown>,
  options: { params?: P } = {},
): (request: Request, context: C) => Promise<Response> {
  return async (request, context) => {
    const started = performance.now();
    const response = await answer(request, context);
    // Counted by route pattern, never by the raw path, which may hold ids.
    const params =
      (await (context as { params?: Promise<Record<string, string | string[]>> } | undefined)?.params) ?? {};
    recordApiRequest(
      routePattern(new URL(request.url).pathname, params),
      request.method,
      response.status,
      (performance.now() - started) / 1000,
    );
    return response;
  };

  function answer(request: Request, context: C): Promise<Response> {
    const requestId = randomUUID();
    return withRequestId(requestId, () => guarded(request, context, requestId));
  }

  async function guarded(request: Request, context: C, requestId: string): Promise<Response> {
    try {
      // A live refetch from an open event stream is that stream's reader (lib/server/live-reads.ts).
      const actor = (await liveReadActor(request)) ?? (await currentActor());
      if (!actor)
        return Response.json(
          { code: 'UNAUTHENTICATED', message: 'Sign in first.' },
          { status: 401, headers: NO_STORE },
        );
      if (!can(actor.role, permission)) {
        return Response.json(
          { code: 'FORBIDDEN', message: `The ${actor.role} role may not read this.` },
          { status: 403, headers: NO_STORE },
        );
      }
      const path = await pathParams(context, options.params);
      if (!path.ok) return invalid('The address is not valid.', path.error);
      const params = Object.fromEntries(new URL(request.url).searchParams.entries());
      const parsed = parseInput(querySchema, params);
      if (!parsed.ok) return invalid('Some query parameters are not valid.', parsed.error.fieldErrors);
      // A live refetch of a list another tab has read since its
      // last change gets that answer (lib/server/live-reads.ts).
      const body = await sharedAnswer(request, actor, () =>
        handler(actor, parsed.value, { ...context, request, path: path.value }),
      );
      if (isPreparedJson(body))
        return new Response(body.text, { headers: { ...NO_STORE, 'Content-Type': 'application/json' } });
      if (body instanceof Response) return body;
      if (body === null)
        return Response.json({ code: 'NOT_FOUND', message: 'Not found.' }, { status: 404, headers: NO_STORE });
      return Response.json(body, { headers: NO_STORE });
    } catch (error) {
      if (isDatabaseBusy(error)) {
        return Response.json(
          { code: 'DATABASE_BUSY', message: 'The database is busy; try again shortly.' },
          { status: 503, headers: { ...NO_STORE, 'Retry-After': '5' } },
        );
      }
      logger.error({ requestId, error: loggableError(error) }, 'read API failed');
      return Response.json(
        { code: 'INTERNAL', message: `Internal error (${requestId}).` },
        { status: 500, headers: NO_STORE },
      );
    }
  }
}

function invalid(message: string, fieldErrors: Record<string, string[]>): Response {
  return Response.json({ code: 'INVALID_INPUT', message, fieldErrors }, { status: 400, headers: NO_STORE });
}

/**
 * A route handler's dynamic segments arrive decoded (the proxy has refused any that
 * do not decode); each passes the path-segment text rules, then the route's schema.
 */
async function pathParams<P extends z.ZodType>(
  context: unknown,
  schema: P | undefined,
): Promise<{ ok: true; value: z.output<P> } | { ok: false; error: Record<string, string[]> }> {
  const raw = (await (context as { params?: Promise<Record<string, string | string[]>> } | undefined)?.params) ?? {};
  const fieldErrors: Record<string, string[]> = {};
  const decoded: Record<string, string | string[]> = {};
  for (const [key, value] of Object.entries(raw)) {
    const checked = (Array.isArray(value) ? value : [value]).map((v) => checkPathSegment(v));
    const bad = checked.find((c) => !c.ok);
    if (bad && !bad.ok) (fieldErrors[key] ??= []).push(bad.error.message);
    else decoded[key] = value;
  }
  if (Object.keys(fieldErrors).length > 0) return { ok: false, error: fieldErrors };
  if (!schema) return { ok: true, value: decoded as z.output<P> };
  const parsed = schema.safeParse(decoded);
  if (parsed.success) return { ok: true, value: parsed.data };
  for (const issue of parsed.error.issues)
    (fieldErrors[issue.path.map(String).join('.') || '_'] ??= []).push(issue.message);
  return { ok: false, error: fieldErrors };
}
