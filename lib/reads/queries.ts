import type { executionDetail, executionList, jobNames } from './executions';
import type { rateCharts } from './rates';
import { readQuery } from './read-query';
import type { userList } from './users';

/**
 * The browser's handles on the reads (lib/reads/*.ts define them): each is the definition's
 * type and its path, checked equal by the compiler, so a view's key and URL are the ones the
 * page prefetched and the route answers. `import type` keeps the server out of the bundle.
 */

export const executionListQuery = /* @__PURE__ */ readQuery<typeof executionList>('/api/executions');
export const executionDetailQuery = /* @__PURE__ */ readQuery<typeof executionDetail>('/api/executions/[id]');
export const jobNamesQuery = /* @__PURE__ */ readQuery<typeof jobNames>('/api/job-names', { staleTime: 60_000 });
export const userListQuery = /* @__PURE__ */ readQuery<typeof userList>('/api/users');
export const rateChartsQuery = /* @__PURE__ */ readQuery<typeof rateCharts>('/api/rates');
