/**
 * What a server action's body may hold before Next.js decodes it. Keel's clients call
 * every action with plain JSON-like arguments, which React's encodeReply sends as one
 * `text/plain` JSON array; a string starting with `$` is escaped as `$$`, and only a
 * handful of primitives (undefined, NaN, ±Infinity, -0) are spelled as `$` words.
 * Anything else (a reference such as `$@0`, `$K1` or `$Q2`, a multipart form, a body
 * that is not JSON or not an argument list) is not something Keel sends, and React
 * would decode it into promises, maps, forms or errors that no action expects: such a
 * body is refused as bad input (docs/security.md, "Server actions").
 */

/**
 * Set by the front door on a server action whose body it refused, naming the problem;
 * lib/server/action.ts answers such a call INVALID_INPUT and audits the refusal. A copy
 * sent by a client is dropped.
 */
export const REFUSED_BODY_HEADER = 'x-keel-refused-body';

/** Larger bodies are refused whole (413) before any is decoded. Next.js' own default limit. */
export const ACTION_BODY_LIMIT_BYTES = 1024 * 1024;

/** The `$` words React's reply encoder writes for plain values. */
const PRIMITIVE_WORDS = new Set(['$undefined', '$NaN', '$Infinity', '$-Infinity', '$-0']);

export type ActionBodyProblem = 'NOT_TEXT' | 'NOT_JSON' | 'NOT_AN_ARGUMENT_LIST' | 'REFERENCE' | 'TOO_DEEP';

export const ACTION_BODY_PROBLEMS: Record<ActionBodyProblem, string> = {
  NOT_TEXT: 'a form or binary body, where Keel sends JSON',
  NOT_JSON: 'a body that is not JSON',
  NOT_AN_ARGUMENT_LIST: 'a body that is not an argument list',
  REFERENCE: 'a reference Keel never sends',
  TOO_DEEP: 'nesting deeper than any action takes',
};

const MAX_DEPTH = 32;

function findProblem(value: unknown, depth: number): ActionBodyProblem | null {
  if (depth > MAX_DEPTH) return 'TOO_DEEP';
  if (typeof value === 'string')
    return value.startsWith('$') && !value.startsWith('$$') && !PRIMITIVE_WORDS.has(value) ? 'REFERENCE' : null;
  if (value === null || typeof value !== 'object') return null;
  for (const inner of Array.isArray(value) ? value : Object.values(value)) {
    const problem = findProblem(inner, depth + 1);
    if (problem) return problem;
  }
  return null;
}

/** Why a server action body is not one Keel's clients send, or null when it is. */
export function actionBodyProblem(contentType: string | null, body: Buffer): ActionBodyProblem | null {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'text/plain') return 'NOT_TEXT';
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
  } catch {
    return 'NOT_JSON';
  }
  if (!Array.isArray(parsed)) return 'NOT_AN_ARGUMENT_LIST';
  return findProblem(parsed, 0);
}

export const isActionBodyProblem = (value: unknown): value is ActionBodyProblem =>
  typeof value === 'string' && Object.hasOwn(ACTION_BODY_PROBLEMS, value);
