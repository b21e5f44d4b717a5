import 'server-only';
import type { QueryKey } from '@tanstack/react-query';
import { z } from 'zod';
import type { Database } from '../db/client';
import type { Actor } from '../domain/actor';
import type { Permission } from '../domain/roles';
import { apiRoute } from '../server/api-route';
import { runtime } from '../server/composition-root';
import { parseInput } from '../server/parse-input';
import { listDb } from '../server/read-source';
import type { SearchValue } from '../url-state/search-string';
import { type ReadAt, readKey, splitAt } from './read-query';

/**
 * A read, declared once: its path, the permission it needs, the schema of its search params
 * (cursors decoded by the schema), where it reads from and the read itself. The route
 * handler (`routeHandler`), the page's prefetch (`readForPage`) and the view's query options
 * (`readQuery`, lib/reads/read-query.ts) are all derived from it (CONTRIBUTING.md#add-a-read).
 */

/**
 * `list`: `listDb()`, the read replica when it is usable (lib/server/read-source.ts).
 * `primary`: the reads an action is taken from (detail pages, users), never behind a write.
 */
export type ReadSource = 'list' | 'primary';

export interface ReadContext<A> {
  actor: Actor;
  /** The path's `[segments]`, parsed with the definition's `args` schema. */
  args: A;
}

type NoArgs = z.ZodType<Record<string, never>>;
const noSearch = z.object({});

export interface ReadDefinition<
  P extends `/api/${string}` = `/api/${string}`,
  S extends z.ZodType = z.ZodType,
  A extends z.ZodType = z.ZodType,
  T = unknown,
> {
  /** The route's path, `[segment]`s as in app/api: `/api/executions/[id]`. */
  readonly path: P;
  readonly permission: Permission;
  /** The search params' schema, shared by the route and the page. */
  readonly search: S;
  /** The schema of the path's `[segments]`, if it has any. */
  readonly args: A | undefined;
  readonly source: ReadSource;
  /** The read; null answers 404 (a detail that does not exist). */
  readonly read: (db: Database, search: z.output<S>, context: ReadContext<z.output<A>>) => Promise<T>;
}

export function defineRead<
  P extends `/api/${string}`,
  T,
  S extends z.ZodType = typeof noSearch,
  A extends z.ZodType = NoArgs,
>(spec: {
  path: P;
  permission: Permission;
  search?: S;
  args?: A;
  source: ReadSource;
  read: (db: Database, search: z.output<S>, context: ReadContext<z.output<A>>) => Promise<T>;
}): ReadDefinition<P, S, A, T> {
  return { ...spec, search: spec.search ?? (noSearch as unknown as S), args: spec.args };
}

// biome-ignore lint/suspicious/noExplicitAny: any definition, whatever its types
type AnyRead = ReadDefinition<`/api/${string}`, z.ZodType, z.ZodType, any>;
type DataOf<D extends AnyRead> = Awaited<ReturnType<D['read']>>;

const dbFor = async (source: ReadSource): Promise<Database> => (source === 'list' ? listDb() : runtime().db);

/** `export const GET = routeHandler(definition)`: through apiRoute(), so session, role and input come first. */
export function routeHandler(definition: AnyRead): (request: Request, context: unknown) => Promise<Response> {
  return apiRoute(
    definition.permission,
    definition.search,
    async (actor, search, { path }) =>
      definition.read(await dbFor(definition.source), search, { actor, args: path as never }),
    definition.args ? { params: definition.args } : {},
  );
}

export interface SearchIssue {
  path: string[];
  message: string;
}

export type PageRead<T> =
  | { ok: true; value: () => Promise<T>; prefetch: { queryKey: QueryKey; queryFn: () => Promise<unknown> } }
  | { ok: false; issues: SearchIssue[] };

const issuesOf = (fieldErrors: Record<string, string[]>): SearchIssue[] =>
  Object.entries(fieldErrors).flatMap(([path, messages]) => messages.map((message) => ({ path: [path], message })));

/**
 * The page's half of the agreement with the route: `raw`, the page's own search params for
 * this read as the browser sent them, is checked with the definition's schema first, so the
 * page refuses (InvalidFilters) what the route answers 400 with, even a value the URL-state
 * parsers would quietly drop; then `at`, the view's params, is parsed from the very text the
 * route gets for the same key (`splitAt`).
 */
export function parseForPage<D extends AnyRead>(
  definition: D,
  at: Readonly<Record<string, SearchValue>>,
  raw?: Readonly<Record<string, SearchValue>>,
): { ok: true; search: unknown; args: unknown } | { ok: false; issues: SearchIssue[] } {
  if (raw) {
    const checked = parseInput(definition.search, splitAt(definition.path, raw).search);
    if (!checked.ok) return { ok: false, issues: issuesOf(checked.error.fieldErrors) };
  }
  const { args, search } = splitAt(definition.path, at);
  const parsed = parseInput(definition.search, search);
  if (!parsed.ok) return { ok: false, issues: issuesOf(parsed.error.fieldErrors) };
  if (!definition.args) return { ok: true, search: parsed.value, args };
  const path = definition.args.safeParse(args);
  if (path.success) return { ok: true, search: parsed.value, args: path.data };
  return { ok: false, issues: path.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) };
}

/**
 * A read for a server page, exactly as its route answers the view's request for the same key:
 * `at` is what the view passes to `readQuery(...).options(at)` (the page's URL state through its
 * loader), `raw` the page's search params for this read (see parseForPage). On success, `prefetch`
 * goes to `Prefetched`, which reads it then and leaves it out if it fails (the view asks the API,
 * which names the problem); a page that needs the answer itself (a detail's 404, a title) awaits
 * `value()`, the same single read.
 */
export async function readForPage<D extends AnyRead>(
  definition: D,
  actor: Actor,
  at: ReadAt<D> | Record<string, never> = {},
  raw?: Readonly<Record<string, SearchValue>>,
): Promise<PageRead<DataOf<D>>> {
  const parsed = parseForPage(definition, at as Record<string, SearchValue>, raw);
  if (!parsed.ok) return parsed;
  let answer: Promise<DataOf<D>> | undefined;
  const value = () =>
    (answer ??= (async () =>
      definition.read(await dbFor(definition.source), parsed.search, { actor, args: parsed.args }))());
  const queryKey = readKey(definition.path, at as Record<string, SearchValue>);
  return { ok: true, value, prefetch: { queryKey, queryFn: value } };
}
