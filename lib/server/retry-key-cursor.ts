import 'server-only';
import {
  decodeRetryKeyCursor,
  encodeRetryKeyCursor,
  retryKeyCursorKey,
  type RetryKeyCursor,
  type RetryKeyCursorError,
} from '../domain/retry-key-cursor';
import type { Result } from '../domain/result';
import { runtime } from './composition-root';
import { singleton } from '../observability/singletons';

/**
 * This process's cursor key, derived from the session secret (runtime()
 * refuses to start without one); it never leaves the server.
 */
const cursorKey = (): Buffer =>
  singleton('retry-key-cursor-key', () => {
    const { authSecret } = runtime().settings;
    if (!authSecret) throw new Error('No session secret: set KEEL_CHECKPOINT_KEY or KEEL_AUTH_SECRET.');
    return retryKeyCursorKey(authSecret);
  });

export const sealRetryKeyCursor = (cursor: RetryKeyCursor): string => encodeRetryKeyCursor(cursor, cursorKey());

/**
 * The cursor a page link carried: absent or empty is the first page; one this server did not seal is INVALID_CURSOR.
 */
export function openRetryKeyCursor(token: string | undefined): Result<RetryKeyCursor | null, RetryKeyCursorError> {
  return token ? decodeRetryKeyCursor(token, cursorKey()) : { ok: true, value: null };
}
