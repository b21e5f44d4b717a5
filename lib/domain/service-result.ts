import type { ErrorCode } from './error-code';
import type { Result } from './result';

/**
 * The one error of every service and server action (docs/design.md#results-and-error-codes): a listed
 * code, a sentence for the person, and for INVALID_INPUT the fields at fault.
 */
export interface ServiceError {
  code: ErrorCode;
  message: string;
  fieldErrors?: Record<string, string[]>;
}

/** What every service answers: its value, or the one error. */
export type ServiceResult<T> = Result<T, ServiceError>;

export const serviceError = (code: ErrorCode, message: string): ServiceError => ({ code, message });

/** A server action's answer as the browser receives it: the value, or the error's fields beside `ok: false`. */
export type ActionResult<T> = { ok: true; value: T } | ({ ok: false } & ServiceError);

/** The action answer of a service's result; only the error's own fields reach the browser. */
export function actionResult<T>(result: ServiceResult<T>): ActionResult<T> {
  if (result.ok) return { ok: true, value: result.value };
  const { code, message, fieldErrors } = result.error;
  return fieldErrors ? { ok: false, code, message, fieldErrors } : { ok: false, code, message };
}
