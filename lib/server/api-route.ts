import 'server-only';
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import { can, type Permission } from '../auth/roles';
import { isDatabaseBusy } from '../db/client';
import type { Actor } from '../domain/actor';
import { logger } from './logger';
import { loggableError } from './safe-error';
import { recordApiRequest, routePattern } from './metrics';
import { currentActor } from './session';

const NO_STORE = { 'Cache-Control': 'no-store' };

/**
 * The one wrapper for read API route handlers: session, role, query parsed with zod,
 * JSON out. Unexpected errors are logged with a request id and answered without detail.
 */
export function apiRoute<S extends z.ZodType, C = unknown>(
  permission: Permission,
  querySchema: S,
  handler: (actor: Actor, query: z.output<S>, context: C & { request: Request }) => Promise<unknown>,
): (request: Request, context: C) => Promise<Response> {
  return async (request, context) => {
    const started = performance.now();
    const response = await answer(request, context);
    // Counted by route pattern, never by the raw path, which may hold ids.
    const params = (await (context as { params?: Promise<Record<string, string | string[]>> } | undefined)?.params) ?? {};
    recordApiRequest(routePattern(new URL(request.url).pathname, params), request.method, response.status, (performance.now() - started) / 1000);
    return response;
  };

  async function answer(request: Request, context: C): Promise<Response> {
    const requestId = randomUUID();
    try {
      const actor = await currentActor();
      if (!actor) return Response.json({ code: 'UNAUTHENTICATED', message: 'Sign in first.' }, { status: 401, headers: NO_STORE });
      if (!can(actor.role, permission)) {
        return Response.json({ code: 'FORBIDDEN', message: `The ${actor.role} role may not read this.` }, { status: 403, headers: NO_STORE });
      }
      const params = Object.fromEntries(new URL(request.url).searchParams.entries());
      const parsed = querySchema.safeParse(params);
      if (!parsed.success) {
        const fieldErrors: Record<string, string[]> = {};
        for (const issue of parsed.error.issues) (fieldErrors[issue.path.join('.') || '_'] ??= []).push(issue.message);
        return Response.json({ code: 'INVALID_INPUT', message: 'Some query parameters are not valid.', fieldErrors }, { status: 400, headers: NO_STORE });
      }
      const body = await handler(actor, parsed.data, { ...context, request });
      if (body instanceof Response) return body;
      if (body === null) return Response.json({ code: 'NOT_FOUND', message: 'Not found.' }, { status: 404, headers: NO_STORE });
      return Response.json(body, { headers: NO_STORE });
    } catch (error) {
      if (isDatabaseBusy(error)) {
        return Response.json({ code: 'DATABASE_BUSY', message: 'The database is busy; try again shortly.' }, { status: 503, headers: { ...NO_STORE, 'Retry-After': '5' } });
      }
      logger.error({ requestId, error: loggableError(error) }, 'read API failed');
      return Response.json({ code: 'INTERNAL', message: `Internal error (${requestId}).` }, { status: 500, headers: NO_STORE });
    }
  }
}
