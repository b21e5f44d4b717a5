import { z } from 'zod';
import { ACTOR_REF_MESSAGE, ACTOR_REF_PATTERN, isActorRef } from './actor-ref';
import { err, ok, type Result } from './result';

export { ACTOR_REF_MESSAGE, ACTOR_REF_PATTERN, isActorRef };

/**
 * The runtime's bounds on the identifiers Keel writes into its tables
 * (docs/design.md#identifiers): the one home of these patterns, for services, form schemas and actions alike.
 */
export const REASON_CODE_PATTERN = /^[A-Z0-9_]{1,64}$/;
export const OPERATION_ID_MAX_LENGTH = 64;
export const OPERATION_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;

export const REASON_CODE_MESSAGE = 'Upper-case letters, digits and _ (1 to 64).';
/** The operation id rule in words, for a bound shorter than the runtime's 64 where a prefix is added. */
export const operationIdMessage = (max: number = OPERATION_ID_MAX_LENGTH) =>
  `The operation id must be 1 to ${max} of A-Z a-z 0-9 . _ : -`;

export const isReasonCode = (value: unknown): value is string =>
  typeof value === 'string' && REASON_CODE_PATTERN.test(value);
export const isOperationId = (value: unknown): value is string =>
  typeof value === 'string' && OPERATION_ID_PATTERN.test(value);

export const validateReasonCode = (value: unknown): Result<string, { kind: 'InvalidReasonCode' }> =>
  isReasonCode(value) ? ok(value) : err({ kind: 'InvalidReasonCode' });
export const validateActorRef = (value: unknown): Result<string, { kind: 'InvalidActorRef' }> =>
  isActorRef(value) ? ok(value) : err({ kind: 'InvalidActorRef' });
export const validateOperationId = (value: unknown): Result<string, { kind: 'InvalidOperationId' }> =>
  isOperationId(value) ? ok(value) : err({ kind: 'InvalidOperationId' });

/** Form and action schemas of the same rules. */
export const reasonCodeSchema = z.string().regex(REASON_CODE_PATTERN, REASON_CODE_MESSAGE);
export const actorRefSchema = z.string().trim().regex(ACTOR_REF_PATTERN, ACTOR_REF_MESSAGE);
export const operationIdSchema = (max: number = OPERATION_ID_MAX_LENGTH) =>
  z.string().regex(OPERATION_ID_PATTERN, operationIdMessage(max)).max(max, operationIdMessage(max));

/**
 * A whole number as a form or a JSON caller sends it: a number, or its decimal digits.
 * Never coerced from anything else (z.coerce.number() reads `true` as 1 and `""` as 0,
 * which could name a real row).
 */
export const wholeNumberSchema = (min: 0 | 1) =>
  z
    .union(
      [
        z.number(),
        z
          .string()
          .regex(/^\d{1,16}$/, 'A whole number, in digits.')
          .transform(Number),
      ],
      { error: 'A whole number, in digits.' },
    )
    .pipe(z.number().int().min(min).max(Number.MAX_SAFE_INTEGER));
