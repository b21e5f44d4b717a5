import type { z } from 'zod';
import type { Result } from '../domain/result';
import { findUnstorableText } from '../domain/text';

export interface InvalidInput {
  /** Messages by field path, for the form or the JSON answer. */
  fieldErrors: Record<string, string[]>;
  /** For the audit log: which fields were refused, never what they held. */
  auditReason: string;
}

const FIELD_NAME = /^[A-Za-z0-9_.]{1,64}$/;
const safeField = (path: readonly PropertyKey[]) => {
  const key = path.map(String).join('.') || '_';
  return FIELD_NAME.test(key) ? key : '?';
};

/**
 * Parses a request's input with its schema, plus the backstop every request gets: no
 * string anywhere in it may hold NUL or a lone surrogate, whatever its schema says
 * (neither can be stored). Used by action(), apiRoute() and page() alike.
 */
export function parseInput<S extends z.ZodType>(schema: S, data: unknown): Result<z.output<S>, InvalidInput> {
  const parsed = schema.safeParse(data);
  // The schema's own message first; the backstop then covers what it let through (fields it does not know).
  const unstorable = parsed.success ? findUnstorableText(data) : null;
  if (parsed.success && !unstorable) return { ok: true, value: parsed.data };
  const issues: readonly { path: readonly PropertyKey[]; message: string }[] = parsed.success
    ? [{ path: unstorable ?? [], message: 'Not valid text: NUL and broken Unicode characters are not allowed.' }]
    : parsed.error.issues;
  const fieldErrors: Record<string, string[]> = {};
  for (const issue of issues) (fieldErrors[safeField(issue.path)] ??= []).push(issue.message);
  return { ok: false, error: { fieldErrors, auditReason: `Invalid input: ${Object.keys(fieldErrors).join(', ')}.` } };
}
