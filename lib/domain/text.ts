import { z } from 'zod';
import { TEXT_PROBLEM_MESSAGES, textProblem } from './text-problem';

// The rules themselves are zod-free (text-problem.ts): the browser checks with them without downloading zod.
export { findUnstorableText, TEXT_PROBLEM_MESSAGES, textProblem, type TextProblem } from './text-problem';

export interface TextOptions {
  /** Largest length in UTF-16 code units, after trimming. */
  max: number;
  min?: number;
  /** Allow tab, line feed and carriage return (notes and reasons written in a text area). */
  multiline?: boolean;
  /** Trim surrounding white space (the default); free-text ids keep theirs. */
  trim?: boolean;
  /** The message for a value shorter than `min`. */
  required?: string;
  /** The message for a value longer than `max`. */
  tooLong?: string;
}

/** A string that is well-formed, free of forbidden controls and bounded. */
export function text(options: TextOptions) {
  const { max, min = 0, multiline = false, trim = true } = options;
  const checked = z.string().superRefine((value, ctx) => {
    const problem = textProblem(value, { multiline });
    if (problem) ctx.addIssue({ code: 'custom', message: TEXT_PROBLEM_MESSAGES[problem], params: { problem } });
  });
  const trimmed = trim ? checked.trim() : checked;
  const bounded = trimmed.max(max, options.tooLong ?? `At most ${max.toLocaleString('en-US')} characters.`);
  return min > 0 ? bounded.min(min, options.required ?? `At least ${min} character${min === 1 ? '' : 's'}.`) : bounded;
}

/** One line: names, filters, ids, cursors. */
export const singleLineText = (max: number, options: Omit<TextOptions, 'max' | 'multiline'> = {}) =>
  text({ ...options, max });

/** A note or reason typed into a text area. */
export const multiLineText = (max: number, options: Omit<TextOptions, 'max' | 'multiline'> = {}) =>
  text({ ...options, max, multiline: true });

/** A query filter: one line, and an emptied form field ('') means "any". */
export const filterText = (max: number, options: Omit<TextOptions, 'max' | 'multiline'> = {}) =>
  singleLineText(max, options)
    .transform((v) => (v === '' ? undefined : v))
    .optional();

export const CURSOR_NOT_KEEL = 'This cursor was not made by Keel.';

/** An opaque keyset cursor made by Keel: printable ASCII only. */
export const cursorText = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[\x21-\x7E]*$/, CURSOR_NOT_KEEL);

/**
 * A keyset cursor decoded by the read's schema: absent or empty is the first page (null), and
 * one Keel did not make is refused on its own field, so every read answers it with the same
 * 400 (lib/reads/define-read.ts) and every page with the same InvalidFilters sentence.
 */
export const decodedCursor = <T>(max: number, decode: (text: string) => T | 'invalid') =>
  cursorText(max)
    .optional()
    .transform((text, ctx): T | null => {
      if (!text) return null;
      const value = decode(text);
      if (value !== 'invalid') return value;
      ctx.addIssue({ code: 'custom', message: CURSOR_NOT_KEEL });
      return z.NEVER;
    });
