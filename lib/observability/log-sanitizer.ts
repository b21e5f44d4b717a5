import { loggableError } from './safe-error';

/**
 * Field names whose values never reach a log, at any depth: tokens, cookies,
 * authorization headers, passwords and secrets, session and user ids, receipt ids,
 * retry keys, the checkpoint key, notes, and a database error's query and parameters.
 * Compared without case, `_` or `-`.
 */
const SENSITIVE_KEY = new RegExp(
  [
    'token|cookie|authorization|password|secret|session|userid|user$|email|receipt|retrykey|checkpointkey',
    '^key$|keys$|note|params|parameters|^query$|^sql$|detail|^hint$|^where$|^body$|^headers$|^message$',
    '^stack$|^args$',
  ].join('|'),
);

const REDACTED = '[redacted]';
const MAX_DEPTH = 5;
const MAX_ITEMS = 20;
const MAX_STRING = 300;

const normalizedKey = (key: string) => key.toLowerCase().replace(/[_\-\s]/g, '');

export const isSensitiveKey = (key: string): boolean => SENSITIVE_KEY.test(normalizedKey(key));

/**
 * A free-text line as it may be logged: its first line only, cut before any
 * `params:` (drizzle puts a failed query's parameters there) and bounded in length.
 */
export function sanitizeLogText(text: string): string {
  let line = text.split(/\r?\n/, 1)[0] ?? '';
  const params = line.search(/\bparams:/i);
  if (params >= 0) line = line.slice(0, params).trimEnd();
  return line.length > MAX_STRING ? `${line.slice(0, MAX_STRING)}…` : line;
}

/**
 * A value as it may be logged: errors reduced to loggableError, byte strings to their
 * length, sensitive fields redacted, text cut to its first line. Pure; never throws.
 */
export function sanitizeLogValue(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value instanceof Error) return loggableError(value);
  if (typeof value === 'string') return sanitizeLogText(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'function' || typeof value === 'symbol') return `[${typeof value}]`;
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Uint8Array || value instanceof ArrayBuffer) return `[${value.byteLength} bytes]`;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'Invalid Date' : value.toISOString();
  if (seen.has(value)) return '[circular]';
  if (depth >= MAX_DEPTH) return '[object]';
  seen.add(value);
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((item) => sanitizeLogValue(item, depth + 1, seen));
  if (value instanceof Map || value instanceof Set || value instanceof Headers || value instanceof URLSearchParams) {
    return `[${value.constructor.name}]`;
  }
  const out: Record<string, unknown> = {};
  let count = 0;
  for (const [key, item] of Object.entries(value)) {
    if (count++ >= MAX_ITEMS * 2) break;
    out[key] = isSensitiveKey(key) ? REDACTED : sanitizeLogValue(item, depth + 1, seen);
  }
  return out;
}

/**
 * The arguments of one pino call, sanitized: the merge object (or an error in its
 * place) and the message; interpolation arguments are sanitized like values.
 */
export function sanitizeLogArguments(args: unknown[]): unknown[] {
  return args.map((arg, index) => {
    if (index === 0 && arg instanceof Error) return { error: loggableError(arg) };
    if (typeof arg === 'string') return sanitizeLogText(arg);
    const clean = sanitizeLogValue(arg);
    return index === 0 || clean === null || typeof clean !== 'object' ? clean : JSON.stringify(clean);
  });
}

/**
 * One line for a terminal, for the command line's own failures: the error's class,
 * SQLSTATE and constraint, and, only for an error without a code (Keel's own, such as
 * "next build failed"), its message's first line. A database or driver error's
 * message can quote values, so it is never printed.
 */
export function describeForLog(error: unknown): string {
  if (!(error instanceof Error)) return `[${typeof error}]`;
  const { name, cause, code, constraint } = loggableError(error);
  const facts = [cause ?? name, code, constraint].filter(Boolean).join(' ');
  return code || cause ? facts : `${sanitizeLogText(error.message)} (${facts})`;
}
