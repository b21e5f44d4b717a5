/**
 * Every TanStack Query key comes from this factory (CONTRIBUTING.md#add-a-read), so a mutation
 * invalidates exactly what it changed.
 */
type Filters = Record<string, string | number | boolean | Date | undefined | null>;

export const queryKeys = {
  overview: () => ['overview'] as const,
  jobNames: () => ['job-names'] as const,
  executions: {
    all: ['executions'] as const,
    list: (filters: Filters) => ['executions', 'list', filters] as const,
    detail: (id: number) => ['executions', 'detail', id] as const,
  },
  retryKeys: {
    all: ['retry-keys'] as const,
    list: (filters: Filters) => ['retry-keys', 'list', filters] as const,
  },
  proposals: {
    all: ['proposals'] as const,
    list: (filters: Filters) => ['proposals', 'list', filters] as const,
    detail: (id: number) => ['proposals', 'detail', id] as const,
  },
  orchestrations: {
    all: ['orchestrations'] as const,
    list: (filters: Filters) => ['orchestrations', 'list', filters] as const,
    detail: (executionId: string) => ['orchestrations', 'detail', executionId] as const,
  },
  settlements: {
    all: ['settlements'] as const,
    queue: (filters: Filters) => ['settlements', 'queue', filters] as const,
    deadLetters: (filters: Filters) => ['settlements', 'dead-letters', filters] as const,
    deadLetterGroups: (filters: Filters) => ['settlements', 'dead-letter-groups', filters] as const,
    receipt: (receiptId: string) => ['settlements', 'receipt', receiptId] as const,
    /** Which filters hide a receipt searched by its exact id (components/settlements/hidden-receipt.tsx). */
    hiddenBy: (filters: Filters) => ['settlements', 'hidden-by', filters] as const,
    bulkReplays: (filters: Filters) => ['settlements', 'bulk-replays', filters] as const,
    bulkReplay: (id: number, filters: Filters = {}) => ['settlements', 'bulk-replay', id, filters] as const,
  },
  audit: {
    all: ['audit'] as const,
    list: (filters: Filters) => ['audit', 'list', filters] as const,
  },
  users: {
    all: ['users'] as const,
    list: (filters: Filters) => ['users', 'list', filters] as const,
  },
  webhooks: {
    all: ['webhooks'] as const,
    deliveries: (filters: Filters) => ['webhooks', 'deliveries', filters] as const,
  },
  /** The /rates charts, every range (lib/reads/rates.ts keys each under this prefix). */
  rates: { all: ['rates'] as const },
  /** The header search and its results page: one text, every kind of id. */
  search: (q: string) => ['search', q] as const,
};
