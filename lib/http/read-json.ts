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

type QueryValue = string | number | boolean | Date | null | undefined;

/** A query string from filters, leaving out empty values, in a stable order. */
export function toQueryString(params: Record<string, QueryValue>): string {
  const search = new URLSearchParams();
  for (const key of Object.keys(params).sort()) {
    const value = params[key];
    if (value === undefined || value === null || value === '' || value === false) continue;
    search.set(key, value instanceof Date ? value.toISOString() : String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

/**
 * The console's one client fetch helper: GETs JSON from a read route (empty params
 * left out); a non-2xx answer becomes an ApiError carrying its code.
 */
export async function readJson<T>(
  path: string,
  params: Record<string, QueryValue> = {},
  signal?: AbortSignal,
): Promise<T> {
  const response = await fetch(`${path}${toQueryString(params)}`, {
    signal,
    headers: { accept: 'application/json' },
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
