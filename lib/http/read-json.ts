import { type SearchValue, withSearch } from '../url-state/search-string';

/** A refusal or failure of a read API, with the code the server named. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fieldErrors?: Record<string, string[]>,
  ) {
    super(message);
  }
}

let liveRounds = 0;
let livePass = '';

/** The pass of this tab's event stream (lib/server/live-reads.ts), shown by its live refetches; '' without one. */
export function setLivePass(pass: string): void {
  livePass = pass;
}

/**
 * Runs `refetch`, which starts the refetches of a live event synchronously (TanStack Query
 * calls a query's function within invalidateQueries): the reads it starts say they are live,
 * with the pass of the tab's event stream, so the server takes the stream's reader for theirs
 * and may answer them with what another tab's refetch of the same list read since its last
 * change (lib/server/live-reads.ts). A page's first read, a filter, an action's own refetch,
 * a tab whose stream is down: none of those say so, and each reads.
 */
export function asLiveRound(refetch: () => void): void {
  liveRounds += 1;
  try {
    refetch();
  } finally {
    liveRounds -= 1;
  }
}

/**
 * The console's one client fetch helper: GETs JSON from a read route (empty params
 * left out); a non-2xx answer becomes an ApiError carrying its code.
 */
export async function readJson<T>(
  path: string,
  params: Readonly<Record<string, SearchValue>> = {},
  signal?: AbortSignal,
): Promise<T> {
  const response = await fetch(withSearch(path, params), {
    signal,
    headers:
      liveRounds > 0 && livePass
        ? { accept: 'application/json', 'x-keel-live-read': livePass }
        : { accept: 'application/json' },
    cache: 'no-store',
  });
  const body: unknown = await response.json().catch(() => null);
  if (!response.ok) {
    const failure = (body ?? {}) as { code?: string; message?: string; fieldErrors?: Record<string, string[]> };
    throw new ApiError(
      response.status,
      failure.code ?? `HTTP_${response.status}`,
      failure.message ?? response.statusText,
      failure.fieldErrors,
    );
  }
  return body as T;
}
