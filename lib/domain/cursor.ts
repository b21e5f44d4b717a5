import { textProblem } from './text-problem';

/**
 * Keyset cursors: the sort key of the last row of a page, opaque to clients
 * (base64url JSON), so a link reproduces the view and no page uses OFFSET.
 */
export function encodeCursor(values: readonly (string | number)[]): string {
  return Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined | null, arity: number): (string | number)[] | null {
  if (!cursor) return null;
  try {
    const values: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(values) || values.length !== arity) return null;
    // A forged cursor is just bad input: its strings obey the text rules like any filter.
    const valid = (v: unknown) =>
      (typeof v === 'string' && textProblem(v) === null && v.length <= 1_000) ||
      (typeof v === 'number' && Number.isFinite(v));
    return values.every(valid) ? values : null;
  } catch {
    return null;
  }
}

export { COUNT_CAP, formatCappedCount, type CappedCount } from './capped-count';
