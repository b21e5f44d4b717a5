/**
 * The one home of the text rules every input passes (notes, reasons, filters, ids,
 * path segments). PostgreSQL's text cannot hold NUL and its UTF-8 cannot hold a lone
 * surrogate, so either would reach the database only to fail there as an internal
 * error; other C0 controls have no business in a one-line field. A multi-line note
 * may keep tab, line feed and carriage return.
 */
const SINGLE_LINE_CONTROL = /[\u0000-\u001F\u007F]/;
const MULTI_LINE_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type TextProblem = 'LONE_SURROGATE' | 'CONTROL_CHARACTER';

export const TEXT_PROBLEM_MESSAGES: Record<TextProblem, string> = {
  LONE_SURROGATE: 'Not valid text (a broken Unicode character).',
  CONTROL_CHARACTER: 'Control characters (such as NUL) are not allowed.',
};

/** What is wrong with a string as text, or null when it is well-formed and free of forbidden controls. */
export function textProblem(value: string, options: { multiline?: boolean } = {}): TextProblem | null {
  if (LONE_SURROGATE.test(value)) return 'LONE_SURROGATE';
  if ((options.multiline ? MULTI_LINE_CONTROL : SINGLE_LINE_CONTROL).test(value)) return 'CONTROL_CHARACTER';
  return null;
}

/**
 * The backstop the request wrappers apply to every string of a request, whatever
 * its schema: NUL and lone surrogates are never valid anywhere in Keel. Returns
 * the path of the first offending string, or null.
 */
export function findUnstorableText(value: unknown, path: string[] = [], depth = 0): string[] | null {
  if (typeof value === 'string') return value.includes('\u0000') || LONE_SURROGATE.test(value) ? path : null;
  if (depth > 8 || value === null || typeof value !== 'object') return null;
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const found = findUnstorableText(inner, [...path, key], depth + 1);
    if (found) return found;
  }
  return null;
}
