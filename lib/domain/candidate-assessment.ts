import type { ErrorCode } from './error-code';

/** Whether a proposal for an execution would be accepted now, and if not why (lib/services/propose-recovery.ts). */
export interface CandidateAssessment {
  candidate: boolean;
  /** The refusal a proposal would get now (NOT_STALE, NOT_RECOVERABLE, ...), when not a candidate. */
  code: ErrorCode | null;
  message: string | null;
}
