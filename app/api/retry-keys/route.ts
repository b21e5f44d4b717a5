import { z } from 'zod';
import { singleLineText } from '@/lib/domain/text';
import { FAILURE_CATEGORIES, FAULT_PHASES } from '@/lib/domain/batch-status';
import { apiRoute } from '@/lib/server/api-route';
import { retryKeysPage } from '@/lib/server/console-reads';
import { retryKeyCursorText } from '@/lib/server/retry-key-cursor';

export const dynamic = 'force-dynamic';

const querySchema = z.object({
  job: singleLineText(128, { min: 1 }).optional(),
  phase: z.enum(FAULT_PHASES).optional(),
  category: z.enum(FAILURE_CATEGORIES).optional(),
  executionId: z.coerce.number().int().positive().optional(),
  only: z.enum(['keys', 'corrupt']).optional(),
  cursor: retryKeyCursorText().optional(),
  limit: z.coerce.number().int().min(1).max(500).optional(),
});

/** GET /api/retry-keys: unresolved keys across steps (or corrupt envelopes), as the page shows them. */
export const GET = apiRoute('read', querySchema, async (_actor, query) => retryKeysPage(query));
