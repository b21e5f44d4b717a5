import { createLoader, createSerializer, parseAsIsoDateTime, parseAsString, parseAsStringLiteral, type inferParserType } from 'nuqs/server';
import { BATCH_STATUSES } from '../domain/batch-status';

/**
 * The executions list's URL state, typed once for the server page (loader), the
 * client hooks (useQueryStates) and the links (serializer). The page and the read
 * API validate the same params with executionFiltersSchema.
 */
export const executionsSearch = {
  status: parseAsStringLiteral(BATCH_STATUSES),
  job: parseAsString,
  stale: parseAsStringLiteral(['1'] as const),
  updatedFrom: parseAsIsoDateTime,
  updatedTo: parseAsIsoDateTime,
  q: parseAsString,
  cursor: parseAsString,
};
export type ExecutionsSearch = inferParserType<typeof executionsSearch>;

export const loadExecutionsSearch = createLoader(executionsSearch);
/** `/executions?…` for a view, or `/api/executions?…` for its data: one serializer for both. */
export const serializeExecutionsSearch = createSerializer(executionsSearch);
export const executionsHref = (search: Partial<ExecutionsSearch>) => serializeExecutionsSearch('/executions', search);
