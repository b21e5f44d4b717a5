/**
 * What of an unexpected error may be logged. Messages are left out: a database
 * error's text can quote a value (a receipt id in a constraint message), and ids,
 * keys and tokens never belong in logs. The error class, the SQLSTATE and the
 * constraint name are enough to find the cause with the request id.
 */
export function loggableError(error: unknown): Record<string, string | undefined> {
  if (!(error instanceof Error)) return { name: typeof error };
  const pg = (error as { cause?: unknown }).cause ?? error;
  const details = pg as { code?: unknown; constraint?: unknown; table?: unknown; routine?: unknown };
  return {
    name: error.name,
    code: typeof details.code === 'string' ? details.code : undefined,
    constraint: typeof details.constraint === 'string' ? details.constraint : undefined,
    table: typeof details.table === 'string' ? details.table : undefined,
    routine: typeof details.routine === 'string' ? details.routine : undefined,
    stack: error.stack?.split('\n').slice(1, 6).join('\n'),
  };
}
