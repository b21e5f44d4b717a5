const IDENTIFIER = /^[A-Za-z_$][\w$]{0,63}$/;
// SQLSTATEs (23505) and Node's system codes (ECONNREFUSED): never a value.
const CODE = /^[A-Z0-9_]{1,40}$/;
const CONSTRAINT = /^[a-z_][a-z0-9_$]{0,62}$/i;

/**
 * An error's class, never free text: its own name when it sets one (a minified build
 * renames constructors), else the constructor's (pg's DatabaseError names itself "error").
 */
function errorClass(error: Error): string {
  if (IDENTIFIER.test(error.name) && error.name !== 'Error' && error.name !== 'error') return error.name;
  const constructorName = (error as { constructor?: { name?: unknown } }).constructor?.name;
  if (typeof constructorName === 'string' && IDENTIFIER.test(constructorName)) return constructorName;
  return 'Error';
}

export interface LoggableError {
  name: string;
  /** The class of the driver error under a wrapper (drizzle's DrizzleQueryError wraps pg's DatabaseError). */
  cause?: string;
  code?: string;
  constraint?: string;
}

/**
 * What of an error may be logged: its class, the SQLSTATE (or system code) and the
 * constraint name, nothing else. A database error's message, detail, query and
 * parameters quote values (drizzle's message ends in `params: ...` with receipt ids,
 * notes, user ids, session tokens), and a stack's first lines repeat the message, so
 * none of them is ever kept. This is the only way an error reaches a log: the logger
 * runs every error it is given through it.
 */
export function loggableError(error: unknown): LoggableError {
  if (!(error instanceof Error)) return { name: typeof error };
  const logged: LoggableError = { name: errorClass(error) };
  // The first error down the cause chain that carries a code is the driver's.
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth += 1, current = current.cause) {
    const { code, constraint } = current as { code?: unknown; constraint?: unknown };
    if (current !== error && !logged.cause) logged.cause = errorClass(current);
    if (typeof code === 'string' && CODE.test(code)) {
      if (current !== error) logged.cause = errorClass(current);
      logged.code = code;
      if (typeof constraint === 'string' && CONSTRAINT.test(constraint)) logged.constraint = constraint;
      break;
    }
  }
  return logged;
}
