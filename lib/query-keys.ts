import { readPrefix } from './reads/read-query';

/**
 * What an action or a live event invalidates: the key prefix of every read under a path. A read's
 * own key is derived from its definition (lib/reads/queries.ts: the path's segments, then the
 * search params), so these prefixes match every key of the reads under a path, and nothing else.
 */
export const queryKeys = {
  overview: () => readPrefix('/api/overview'),
  executions: { all: readPrefix('/api/executions') },
  retryKeys: { all: readPrefix('/api/retry-keys') },
  proposals: { all: readPrefix('/api/proposals') },
  orchestrations: { all: readPrefix('/api/orchestrations') },
  settlements: { all: readPrefix('/api/settlements') },
  audit: { all: readPrefix('/api/audit') },
  users: { all: readPrefix('/api/users') },
  webhooks: { all: readPrefix('/api/webhooks') },
  rates: { all: readPrefix('/api/rates') },
};
