import 'server-only';
import { cache } from 'react';
import { z } from 'zod';
import type { Database } from '../db/client';
import { idPathSchema, receiptPathSchema } from '../domain/path-segment';
import { decodedCursor } from '../domain/text';
import { readLastSample } from '../queries/last-sample';
import {
  deadLetterGroups,
  listBulkReplays,
  listDeadLetterPage,
  listSettlementQueue,
  parseBulkReplayCursor,
  parseSettlementCursor,
  readBulkReplayDetail,
  readReceiptHistory,
  type SettlementReadOptions,
} from '../queries/settlements';
import {
  bulkReplayItemsSchema,
  bulkReplayListSchema,
  deadLetterFiltersSchema,
  queueFiltersSchema,
} from '../queries/settlements-types';
import { defineRead } from './define-read';

/** The keyset cursor of the queue and the dead letters, decoded by the schema; one they did not give out is a 400. */
const settlementCursor = z.object({ cursor: decodedCursor(400, parseSettlementCursor) });

/** The settlement queue in due order, one state at a time. */
export const settlementQueue = defineRead({
  path: '/api/settlements/queue',
  permission: 'read',
  search: z.intersection(queueFiltersSchema, settlementCursor),
  source: 'list',
  read: (db, filters) => listSettlementQueue(db, filters),
});

/**
 * The clock and the sampler's last figures, read once per server render (React's cache), so
 * the dead letters and their groups on one page measure ages alike; a route call reads its own.
 */
const sharedClock = cache(async (db: Database): Promise<SettlementReadOptions> => {
  const sample = await readLastSample(db);
  return { nowMs: sample.nowMs, sample };
});

/** Dead letters, newest first. */
export const deadLetterList = defineRead({
  path: '/api/settlements/dead-letters',
  permission: 'read',
  search: z.intersection(deadLetterFiltersSchema, settlementCursor),
  source: 'list',
  read: async (db, filters) => listDeadLetterPage(db, filters, await sharedClock(db)),
});

/** Dead letters counted by reason code under the other filters (the reason filter is ignored). */
export const deadLetterGroupList = defineRead({
  path: '/api/settlements/dead-letters/groups',
  permission: 'read',
  search: deadLetterFiltersSchema,
  source: 'list',
  read: async (db, filters) => deadLetterGroups(db, filters, await sharedClock(db)),
});

/** Where a receipt is, its events, replays and audit trail; from the primary, since it is acted on. */
export const receiptHistory = defineRead({
  path: '/api/settlements/receipts/[receiptId]',
  permission: 'read',
  args: receiptPathSchema,
  source: 'primary',
  read: (db, _search, { args }) => readReceiptHistory(db, args.receiptId),
});

/** Bulk replay jobs, newest first. */
export const bulkReplayList = defineRead({
  path: '/api/settlements/bulk-replays',
  permission: 'read',
  search: bulkReplayListSchema.extend({ cursor: decodedCursor(100, parseBulkReplayCursor) }),
  source: 'list',
  read: (db, filters) => listBulkReplays(db, filters),
});

/** One bulk replay: progress, counts by result, and a page of its items. */
export const bulkReplayDetail = defineRead({
  path: '/api/settlements/bulk-replays/[id]',
  permission: 'read',
  args: idPathSchema,
  search: bulkReplayItemsSchema,
  source: 'primary',
  read: (db, page, { args }) => readBulkReplayDetail(db, args.id, page),
});
