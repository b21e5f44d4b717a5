import 'server-only';
import { forbidden, notFound, redirect } from 'next/navigation';
import type { ReactNode } from 'react';
import { z } from 'zod';
import { can, type Permission } from '../domain/roles';
import type { Actor } from '../domain/actor';
import { decodePathSegment } from '../domain/path-segment';
import { parseInput } from './parse-input';
import { currentActor } from './session';

type RawParams = Record<string, string | string[] | undefined>;

/** What Next.js hands a page: its dynamic segments and its search params. */
export interface PageProps {
  params: Promise<RawParams>;
  searchParams: Promise<RawParams>;
}

export type SearchResult<T> = { ok: true; value: T } | { ok: false; issues: { path: string[]; message: string }[] };

export interface PageContext<P, S> {
  actor: Actor;
  /** The dynamic segments, decoded once and parsed with the page's schema. */
  params: P;
  /** The first non-empty value of each search param, as given (a view's query key is made from it). */
  query: Record<string, string>;
  /** The search params parsed with the page's schema; a page shows its invalid-filter state on failure. */
  search: SearchResult<S>;
}

/**
 * The one guard for every console page, like action() and apiRoute(): the session
 * (none: sign-in), the permission (missing: a real HTTP 403 through forbidden()),
 * the path params (malformed or invalid: not found) and the search params, all
 * before the page reads anything. Pages render per request, so each client
 * navigation checks the session again: a disabled user's open tab gets no data.
 */
export function page<
  P extends z.ZodType = z.ZodType<Record<string, string>>,
  S extends z.ZodType = z.ZodType<Record<string, string>>,
>(
  permission: Permission,
  schemas: { params?: P; search?: S },
  render: (context: PageContext<z.output<P>, z.output<S>>) => ReactNode | Promise<ReactNode>,
): (props: PageProps) => Promise<ReactNode> {
  // biome-ignore lint/correctness/noComponentHookFactories: a server component per page, built once at module load
  return async function GuardedPage(props) {
    const actor = await currentActor();
    if (!actor) redirect('/sign-in');
    if (!can(actor.role, permission)) forbidden();
    const params = pathParams((await props.params) ?? {}, schemas.params);
    if (!params.ok) notFound();
    const query = firstValues((await props.searchParams) ?? {});
    return render({ actor, params: params.value, query, search: searchOf(query, schemas.search) });
  };
}

/** A page's dynamic segments arrive still percent-encoded: each is decoded exactly once, safely. */
function pathParams<P extends z.ZodType>(
  raw: RawParams,
  schema: P | undefined,
): { ok: true; value: z.output<P> } | { ok: false } {
  const decoded: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== 'string') return { ok: false };
    const segment = decodePathSegment(value);
    if (!segment.ok) return { ok: false };
    decoded[key] = segment.value;
  }
  if (!schema) return { ok: true, value: decoded as z.output<P> };
  const parsed = schema.safeParse(decoded);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false };
}

/** The first value of each param; an emptied form field means "any" everywhere in Keel, so it is dropped. */
function firstValues(raw: RawParams): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (typeof first === 'string' && first !== '') query[key] = first;
  }
  return query;
}

function searchOf<S extends z.ZodType>(
  query: Record<string, string>,
  schema: S | undefined,
): SearchResult<z.output<S>> {
  const parsed = parseInput(schema ?? anyQuery, query);
  if (parsed.ok) return { ok: true, value: parsed.value as z.output<S> };
  return {
    ok: false,
    issues: Object.entries(parsed.error.fieldErrors).flatMap(([path, messages]) =>
      messages.map((message) => ({ path: [path], message })),
    ),
  };
}

// Without a schema the search params still get parseInput's backstop (no NUL, no lone surrogate).
const anyQuery = z.record(z.string(), z.string());
