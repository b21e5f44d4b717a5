import { z } from 'zod';
import type { Result } from './result';
import { singleLineText, textProblem, type TextProblem } from './text';

export type PathSegmentError =
  | { code: 'MALFORMED_ENCODING'; message: string }
  | { code: 'INVALID_TEXT'; problem: TextProblem; message: string }
  | { code: 'TOO_LONG'; message: string };

/** Longer than any id Keel has (receipt ids are at most 1,000 characters). */
export const MAX_PATH_SEGMENT = 1_000;

/**
 * Decodes one percent-encoded path segment exactly once. Malformed encoding
 * (`%ZZ`, a cut `%E0%A4%A`, bytes that are not UTF-8 such as `%ED%A0%80`) is a typed
 * error rather than the URIError decodeURIComponent throws, and the decoded text
 * passes the one-line text rules (no NUL or other control, no lone surrogate).
 */
export function decodePathSegment(raw: string): Result<string, PathSegmentError> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    return {
      ok: false,
      error: { code: 'MALFORMED_ENCODING', message: 'The address holds malformed percent-encoding.' },
    };
  }
  return checkPathSegment(decoded);
}

/** The text rules for a segment that is already decoded (a route handler's params). */
export function checkPathSegment(decoded: string): Result<string, PathSegmentError> {
  if (decoded.length > MAX_PATH_SEGMENT) {
    return {
      ok: false,
      error: {
        code: 'TOO_LONG',
        message: `A path segment is at most ${MAX_PATH_SEGMENT.toLocaleString('en-US')} characters.`,
      },
    };
  }
  const problem = textProblem(decoded);
  if (problem)
    return {
      ok: false,
      error: { code: 'INVALID_TEXT', problem, message: 'The address holds characters that are not valid text.' },
    };
  return { ok: true, value: decoded };
}

/** The first segment of a raw path that does not decode, or null: what the front door refuses before routing. */
export function malformedPathSegment(pathname: string): PathSegmentError | null {
  for (const segment of pathname.split('/')) {
    if (!segment.includes('%')) continue;
    const decoded = decodePathSegment(segment);
    if (!decoded.ok && decoded.error.code !== 'TOO_LONG') return decoded.error;
  }
  return null;
}

/** `[id]` of executions, proposals and bulk replays: a positive integer Keel made. */
export const idPathSchema = z.object({
  id: z
    .string()
    .regex(/^[1-9]\d{0,14}$/, 'Ids are positive integers.')
    .transform(Number),
});

/** `[receiptId]`: the runtime's free text, kept exactly as given. */
export const receiptPathSchema = z.object({ receiptId: singleLineText(MAX_PATH_SEGMENT, { min: 1, trim: false }) });
