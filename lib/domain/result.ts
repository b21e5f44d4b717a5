/** The value every port, service and domain function returns across a boundary. */
export type Result<T, E> = { ok: true; value: T } | { ok: false; error: E };

export const ok = <T>(value: T): { ok: true; value: T } => ({ ok: true, value });
export const err = <E>(error: E): { ok: false; error: E } => ({ ok: false, error });

/** The same result with its value mapped; an error passes through as it is. */
export const mapOk = <T, U, E>(result: Result<T, E>, map: (value: T) => U): Result<U, E> =>
  result.ok ? ok(map(result.value)) : result;

const malformedReason = (error: unknown): string | null =>
  error instanceof TypeError || error instanceof RangeError || error instanceof SyntaxError ? error.message : null;

/**
 * Makes a Result-returning pure function total over malformed input: reading a field
 * of a shape it was not given (JavaScript's TypeError or RangeError) becomes the
 * function's own error value (`onMalformed`) instead of an exception. Any other error
 * still throws, so a bug is not mistaken for bad input.
 */
export function totalResult<A extends unknown[], T, E>(
  fn: (...args: A) => Result<T, E>,
  onMalformed: (reason: string) => E,
): (...args: A) => Result<T, E> {
  return (...args: A) => {
    try {
      return fn(...args);
    } catch (error) {
      const reason = malformedReason(error);
      if (reason === null) throw error;
      return err(onMalformed(reason));
    }
  };
}

/** The same for a function answering a plain value: malformed input answers `fallback`. */
export function totalValue<A extends unknown[], T>(fn: (...args: A) => T, fallback: T): (...args: A) => T {
  return (...args: A) => {
    try {
      return fn(...args);
    } catch (error) {
      if (malformedReason(error) === null) throw error;
      return fallback;
    }
  };
}
