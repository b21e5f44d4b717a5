import { type QueryKey, queryOptions } from '@tanstack/react-query';
import type { z } from 'zod';
import { readJson } from '../http/read-json';
import { type SearchValue, searchParamsOf, withSearch } from '../url-state/search-string';

/**
 * The browser's half of a read (lib/reads/define-read.ts has the server's): its query key,
 * its URL and TanStack Query options, all derived from the read's path. The browser's handles
 * (lib/reads/queries.ts) declare each read with client-safe types (ReadType), so nothing of
 * the server reaches the browser.
 */

/** What a handle takes from a read: types only, besides the path (a definition, or a ReadType). */
export interface ReadShape {
  readonly path: `/api/${string}`;
  readonly search: z.ZodType;
  readonly read: (...args: never[]) => Promise<unknown>;
}

/**
 * A read as the browser declares it (lib/reads/queries.ts), from client-safe modules only: its
 * path, `In` the search params it takes (a schema's input) and `T` the data it answers. A
 * definition (lib/reads/*.ts) is a ReadShape too; test/unit/reads.test.ts holds each handle
 * declared this way equal, for the type checker, to the one its definition would give.
 */
// `In` defaults to what a definition without a search schema takes (the input of `z.object({})`).
export interface ReadType<P extends `/api/${string}`, T, In extends object = Record<string, never>> {
  readonly path: P;
  readonly search: z.ZodType<unknown, In>;
  readonly read: (...args: never[]) => Promise<T>;
}

/** The search params of a list read paged by a keyset cursor: the cursor as the list gave it out. */
export type WithCursor<S extends z.ZodType> = z.input<S> & { cursor?: string };

type ArgNames<P extends string> = P extends `${string}[${infer Name}]${infer Rest}` ? Name | ArgNames<Rest> : never;

/** A read's answer as the browser gets it (a read answering null is a 404, never data). */
export type ReadData<D extends ReadShape> = D['read'] extends (...args: never[]) => Promise<infer T>
  ? NonNullable<T>
  : never;

/** The path's `[segments]` and the search params of a read, as a view or a page names them. */
export type ReadAt<D extends ReadShape> = { [K in ArgNames<D['path']>]: string | number } & {
  [K in keyof z.input<D['search']> & string]?: SearchValue;
};
type AtArgs<D extends ReadShape> = [ArgNames<D['path']>] extends [never] ? [at?: ReadAt<D>] : [at: ReadAt<D>];

// Every read is under /api; the key leaves that out.
const segmentsOf = (path: string) =>
  path
    .replace(/^\/api\//, '')
    .split('/')
    .filter(Boolean);
const argOf = (segment: string) => /^\[(\w+)\]$/.exec(segment)?.[1];

/**
 * `/api/settlements/queue` → `['settlements', 'queue']`: the first elements of every key of
 * reads under that path, so invalidating it refetches them all (an action invalidates
 * `readPrefix('/api/settlements')`). A prefix stops at the first `[segment]`.
 */
export function readPrefix(path: string): string[] {
  const segments = segmentsOf(path);
  const firstArg = segments.findIndex((segment) => argOf(segment) !== undefined);
  return firstArg < 0 ? segments : segments.slice(0, firstArg);
}

function split(path: string, at: Readonly<Record<string, SearchValue>>) {
  const search: Record<string, SearchValue> = { ...at };
  const args: Record<string, string> = {};
  const segments = segmentsOf(path).map((segment) => {
    const arg = argOf(segment);
    if (arg === undefined) return { value: segment, encoded: segment };
    delete search[arg];
    const value = String(at[arg] ?? '');
    args[arg] = value;
    return { value, encoded: encodeURIComponent(value) };
  });
  return { segments, args, search };
}

/**
 * What the route receives for `at`: the path's `[segments]` as text (as Next.js hands them,
 * decoded) and the search params as the URL carries them.
 */
export function splitAt(path: string, at: Readonly<Record<string, SearchValue>>) {
  const { args, search } = split(path, at);
  return { args, search: searchParamsOf(search) };
}

/** The query key of a read: its path's segments (`[id]` filled in), then its search params. */
export function readKey(path: string, at: Readonly<Record<string, SearchValue>> = {}): QueryKey {
  const { segments, search } = split(path, at);
  return [...segments.map((s) => s.value), searchParamsOf(search)];
}

/** The URL a read is fetched from: `/api/executions/42`, `/api/audit?actor=ada`. */
export function readUrl(path: string, at: Readonly<Record<string, SearchValue>> = {}): string {
  const { segments, search } = split(path, at);
  return withSearch(`/api/${segments.map((s) => s.encoded).join('/')}`, search);
}

/**
 * A view's handle on a read: `userListQuery.options(search)` (lib/reads/queries.ts) is the
 * key, the fetch and the answer's type in one; the page prefetched the same key.
 */
export function readQuery<D extends ReadShape>(path: D['path'], defaults: { staleTime?: number } = {}) {
  const at = (args: unknown[]) => (args[0] ?? {}) as Record<string, SearchValue>;
  return {
    path,
    prefix: readPrefix(path),
    key: (...args: AtArgs<D>) => readKey(path, at(args)),
    url: (...args: AtArgs<D>) => readUrl(path, at(args)),
    options: (...args: AtArgs<D>) =>
      queryOptions({
        ...defaults,
        queryKey: readKey(path, at(args)),
        queryFn: ({ signal }) => readJson<ReadData<D>>(readUrl(path, at(args)), {}, signal),
      }),
  };
}
