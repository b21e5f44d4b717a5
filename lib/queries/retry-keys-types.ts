import { z } from 'zod';
import { FAILURE_CATEGORIES, FAULT_PHASES } from '../domain/batch-status';
import type { FaultPolicyError, FaultStateFormatError } from '../domain/fault-state';
import { singleLineText } from '../domain/text';

// The retry keys list as the browser receives it: client-safe, so components may import it.

/**
 * The retry keys list's filters, shared by the read API and the page; the read adds the
 * sealed cursor, opened by its schema (lib/reads/retry-keys.ts).
 */
export const retryKeyFiltersSchema = z.object({
  job: singleLineText(128, { min: 1 }).optional(),
  phase: z.enum(FAULT_PHASES).optional(),
  category: z.enum(FAILURE_CATEGORIES).optional(),
  executionId: z.coerce.number().int().positive().optional(),
  only: z.enum(['keys', 'corrupt']).optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

/** The step's fault policy from its definition manifest; null shows as "limit unknown". */
export interface FaultLimits {
  retryLimit: number;
  stateLimit: number;
}

/** A step's columns besides its envelope: the execution, the job's name and the step's fault policy. */
export interface StepColumns {
  stepId: number;
  executionId: number;
  stepLogicalId: string;
  stepStatus: string;
  jobName: string;
  limits: FaultLimits | null;
}

export type RetryKeyListRow =
  | (StepColumns & {
      kind: 'key';
      /** The full key, for the copy button; pages show `keyPrefix`. Never log it. */
      key: string;
      keyPrefix: string;
      phase: string;
      category: string;
      ordinal: number;
      revision: string;
    })
  /** An envelope that fails validation: shown as CORRUPT with its error; no action may act on it. */
  | (StepColumns & { kind: 'corrupt'; error: FaultStateFormatError | FaultPolicyError; message: string });

/** A page of the list as the read API sends it: the next cursor sealed (lib/server/retry-key-cursor.ts). */
export interface RetryKeyListView {
  rows: RetryKeyListRow[];
  nextCursor: string | null;
}
