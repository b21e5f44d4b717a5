/**
 * PostgreSQL's error codes (SQLSTATE, https://www.postgresql.org/docs/current/errcodes-appendix.html)
 * that Keel acts on, by name, and the one way to read an error's code.
 */
export const SQLSTATE = {
  STRING_DATA_RIGHT_TRUNCATION: '22001',
  NUMERIC_VALUE_OUT_OF_RANGE: '22003',
  NOT_NULL_VIOLATION: '23502',
  FOREIGN_KEY_VIOLATION: '23503',
  UNIQUE_VIOLATION: '23505',
  CHECK_VIOLATION: '23514',
  SERIALIZATION_FAILURE: '40001',
  DEADLOCK_DETECTED: '40P01',
} as const;

export type SqlState = (typeof SQLSTATE)[keyof typeof SQLSTATE];

// Five digits or capitals: a SQLSTATE, never a Node system code such as ECONNREFUSED.
const SQLSTATE_SHAPE = /^[0-9A-Z]{5}$/;

/**
 * The SQLSTATE of a database error, seen through its wrappers (drizzle's DrizzleQueryError
 * holds pg's DatabaseError as its cause), or undefined when no error on the chain has one.
 */
export function sqlStateOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth += 1, current = current.cause) {
    const { code } = current as { code?: unknown };
    if (typeof code === 'string' && SQLSTATE_SHAPE.test(code)) return code;
  }
  return undefined;
}

/** The constraint a database error names (an integrity violation's), seen through its wrappers like its code. */
export function constraintOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth += 1, current = current.cause) {
    const { code, constraint } = current as { code?: unknown; constraint?: unknown };
    if (typeof code === 'string' && SQLSTATE_SHAPE.test(code))
      return typeof constraint === 'string' ? constraint : undefined;
  }
  return undefined;
}

/** PostgreSQL rolled the whole transaction back (a deadlock's victim, a serialization failure): it may run again. */
export const isRetryableTransactionFailure = (error: unknown): boolean => {
  const code = sqlStateOf(error);
  return code === SQLSTATE.DEADLOCK_DETECTED || code === SQLSTATE.SERIALIZATION_FAILURE;
};

export const isUniqueViolation = (error: unknown): boolean => sqlStateOf(error) === SQLSTATE.UNIQUE_VIOLATION;
