import { z } from 'zod';
import { BATCH_STATUSES, type OwnerObservation } from '../domain/batch-status';
import type { CappedCount } from '../domain/cursor';
import { singleLineText } from '../domain/text';

const isoDate = z.iso.datetime({ offset: true }).or(z.iso.date());

/**
 * The executions filters, shared by the page, the read API and the URL; the read adds the
 * keyset cursor, decoded by its schema (lib/reads/executions.ts).
 */
export const executionFiltersSchema = z.object({
  status: z.enum(BATCH_STATUSES).optional(),
  job: singleLineText(128, { min: 1 }).optional(),
  stale: z.enum(['1']).optional(),
  updatedFrom: isoDate.optional(),
  updatedTo: isoDate.optional(),
  q: z
    .string()
    .trim()
    .regex(/^\d{1,18}$/, 'Search by an execution id or a job instance id (digits).')
    .optional(),
});
export type ExecutionFilterWords = z.output<typeof executionFiltersSchema>;

/** What the executions list returns: shared by the server query, the read API and the page. */
export interface ExecutionListItem {
  id: number;
  jobName: string;
  instanceId: number;
  status: string;
  attempt: number;
  version: number;
  updatedAt: string;
  stale: boolean;
  owner: OwnerObservation;
  stopRequested: boolean;
  failureCategory: string | null;
}

export interface ExecutionPage {
  items: ExecutionListItem[];
  nextCursor: string | null;
  total: CappedCount;
  serverNow: string;
  /** Set when the view runs without its index, under a statement timeout. */
  indexWarning: string | null;
}
