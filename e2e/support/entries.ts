import {
  ACTION_PERMISSIONS,
  PERMISSIONS,
  ROLES,
  type ActionName,
  type Permission,
  type Role,
} from '../../lib/domain/roles';

/**
 * What the access matrix and the hostile-input suite know of each entry point: its
 * permission (a key of PERMISSIONS; who holds it comes only from that table) and a
 * harmless input or sample row. An entry the build or app/ has and this file lacks
 * fails the matrix's inventory test, so nothing new slips in unguarded.
 */

// No row has this id; it fits every id column, so an allowed call gets past the guard and finds nothing.
export const NO_ID = 2_000_000_000;
export const NO_RECEIPT = 'access-matrix-no-such-receipt';

/** A server action's permission, as the code declares it once (ACTION_PERMISSIONS). */
export const actionPermission = (spec: { name: ActionName }): Permission => ACTION_PERMISSIONS[spec.name];

/**
 * Each server action's name (its permission comes from ACTION_PERMISSIONS) and a harmless input: it reaches the service
 * for an allowed caller (which refuses NOT_FOUND, answers INVALID_INPUT, or changes nothing),
 * so "allowed" is seen without changing the data the other specs use. A new action
 * that is not listed here fails the inventory test.
 */
export const ACTIONS: Record<string, { name: ActionName; input: unknown }> = {
  'app/actions/recovery.ts#proposeTakeover': {
    name: 'recovery.propose',
    input: { target: 'batch', executionId: NO_ID, reason: 'access matrix' },
  },
  'app/actions/recovery.ts#confirmProposal': {
    name: 'recovery.confirm',
    input: { proposalId: NO_ID, evidenceDigest: '0'.repeat(64) },
  },
  'app/actions/recovery.ts#rejectRecoveryProposal': {
    name: 'recovery.reject',
    input: { proposalId: NO_ID, reason: 'access matrix' },
  },
  'app/actions/recovery.ts#proposeExecutionAbandon': {
    name: 'execution.abandon.propose',
    input: { executionId: NO_ID, note: 'access matrix' },
  },
  'app/actions/recovery.ts#cancelRecoveryProposal': { name: 'recovery.cancel', input: { proposalId: NO_ID } },
  'app/actions/recovery.ts#requestExecutionStop': {
    name: 'execution.request_stop',
    input: { executionId: NO_ID, operationId: 'access-matrix-stop' },
  },
  'app/actions/settlements.ts#replayDeadLetterAction': {
    name: 'settlement.replay',
    input: { receiptId: NO_RECEIPT, note: 'access matrix', operationId: 'access-matrix-replay' },
  },
  'app/actions/settlements.ts#discardDeadLetterAction': {
    name: 'settlement.discard',
    input: { receiptId: NO_RECEIPT, note: 'access matrix', operationId: 'access-matrix-discard' },
  },
  'app/actions/settlements.ts#requeueSettlementAction': {
    name: 'settlement.requeue',
    input: { receiptId: NO_RECEIPT, expectedRowVersion: 0, operationId: 'access-matrix-requeue' },
  },
  // An empty note is refused after the guard; a valid preview would freeze a real job.
  'app/actions/settlements.ts#previewBulkReplayAction': {
    name: 'settlement.bulk_replay.preview',
    input: { filters: { q: NO_RECEIPT }, note: '' },
  },
  'app/actions/settlements.ts#previewBulkRequeueAction': {
    name: 'settlement.bulk_replay.preview',
    input: { receiptIds: [NO_RECEIPT], note: '' },
  },
  'app/actions/settlements.ts#startBulkReplayAction': { name: 'settlement.bulk_replay.start', input: { jobId: NO_ID } },
  'app/actions/settlements.ts#cancelBulkReplayAction': {
    name: 'settlement.bulk_replay.cancel',
    input: { jobId: NO_ID },
  },
  'app/actions/users.ts#createUserAction': {
    name: 'user.create',
    input: { username: 'viewer', name: 'Access Matrix', role: 'viewer', password: 'access-matrix-1' },
  },
  'app/actions/users.ts#disableUserAction': { name: 'user.disable', input: { username: 'matrix_nobody' } },
  // Enabling an enabled user and giving a role the user has are real successes that change nothing.
  'app/actions/users.ts#enableUserAction': { name: 'user.enable', input: { username: 'viewer' } },
  'app/actions/users.ts#changeUserRoleAction': {
    name: 'user.role',
    input: { username: 'viewer', role: 'viewer', expectedRole: 'viewer' },
  },
  // An endpoint no setting names is refused UNKNOWN_ENDPOINT,
  // a delivery that does not exist NOT_FOUND: nothing is sent.
  'app/actions/webhooks.ts#sendTestWebhookAction': {
    name: 'webhook.send_test',
    input: { endpoint: 'access-matrix-nobody', operationId: 'access-matrix-send-test' },
  },
  'app/actions/webhooks.ts#retryWebhookAction': {
    name: 'webhook.retry',
    input: { deliveryId: NO_ID, operationId: 'access-matrix-retry' },
  },
  'app/actions/session.ts#signOut': { name: 'session.sign_out', input: {} },
  // A zone that does not exist: refused INVALID_INPUT after the guard, so no user's zone changes.
  'app/actions/preferences.ts#setTimeZoneAction': { name: 'user.time_zone', input: { timeZone: 'Mars/Olympus' } },
};

/** Each page's permission; a dynamic segment is filled from the demo data when it has a row. */
export const PAGES: Record<string, { permission: Permission | 'public'; sample?: string }> = {
  '/': { permission: 'read' },
  '/rates': { permission: 'read' },
  '/audit': { permission: 'read' },
  '/executions': { permission: 'read' },
  '/executions/[id]': { permission: 'read', sample: 'select min(id)::text as v from oxide_batch.ob_job_execution' },
  '/orchestrations/[id]': { permission: 'read', sample: 'select min(execution_id) as v from keel.durable_checkpoint' },
  '/recovery': { permission: 'read' },
  '/recovery/[id]': { permission: 'read', sample: 'select min(id)::text as v from keel.recovery_proposal' },
  '/retry-keys': { permission: 'read' },
  '/settlements': { permission: 'read' },
  '/settlements/[receiptId]': { permission: 'read', sample: 'select min(receipt_id) as v from settle.dead_letters' },
  '/settlements/bulk': { permission: 'read' },
  '/settlements/bulk/[id]': { permission: 'read', sample: 'select min(id)::text as v from keel.bulk_replay' },
  '/settlements/dead-letters': { permission: 'read' },
  '/search': { permission: 'read' },
  '/preferences': { permission: 'read' },
  '/users': { permission: 'manageUsers' },
  '/webhooks': { permission: 'manageWebhooks' },
  '/sign-in': { permission: 'public' },
};

/** `query`: what a route needs beside its path to answer at all (the search asks for something to find). */
export const ROUTES: Record<
  string,
  { permission: Permission | 'public' | 'better-auth'; sample?: string; query?: string }
> = {
  '/api/audit': { permission: 'read' },
  '/api/audit/export': { permission: 'read' },
  '/api/auth/[...all]': { permission: 'better-auth' },
  '/api/events': { permission: 'read' },
  '/api/executions': { permission: 'read' },
  '/api/executions/[id]': { permission: 'read', sample: PAGES['/executions/[id]']!.sample },
  '/api/health': { permission: 'public' },
  '/api/job-names': { permission: 'read' },
  '/api/metrics': { permission: 'read' },
  '/api/needs-you': { permission: 'read' },
  '/api/orchestrations': { permission: 'read' },
  '/api/orchestrations/[id]': { permission: 'read', sample: PAGES['/orchestrations/[id]']!.sample },
  '/api/overview': { permission: 'read' },
  '/api/proposals': { permission: 'read' },
  '/api/proposals/[id]': { permission: 'read', sample: PAGES['/recovery/[id]']!.sample },
  '/api/rates': { permission: 'read' },
  '/api/retry-keys': { permission: 'read' },
  '/api/search': { permission: 'read', query: 'q=1' },
  '/api/settlements/bulk-replays': { permission: 'read' },
  '/api/settlements/bulk-replays/[id]': { permission: 'read', sample: PAGES['/settlements/bulk/[id]']!.sample },
  '/api/settlements/dead-letters': { permission: 'read' },
  '/api/settlements/dead-letters/groups': { permission: 'read' },
  '/api/settlements/queue': { permission: 'read' },
  '/api/settlements/receipts/[receiptId]': { permission: 'read', sample: PAGES['/settlements/[receiptId]']!.sample },
  '/api/users': { permission: 'manageUsers' },
  '/api/webhooks/deliveries': { permission: 'manageWebhooks' },
};

/**
 * docs/security.md's "Who can reach what" table, rendered from PERMISSIONS and the
 * entries above; the access matrix checks the document still holds exactly this.
 */
export function renderAccessTable(): string {
  const head = `| entry | permission | ${ROLES.join(' | ')} | no session, expired, forged |`;
  const rule = `|---|---|${ROLES.map(() => '---').join('|')}|---|`;
  const cells = (permission: Permission | 'public') =>
    ROLES.map((role) =>
      permission === 'public' || (PERMISSIONS[permission] as readonly Role[]).includes(role) ? 'yes' : 'no',
    ).join(' | ');
  const row = (entry: string, permission: Permission | 'public') =>
    `| ${entry} | ${permission} | ${cells(permission)} | ${permission === 'public' ? 'yes' : 'no'} |`;
  const lines = [
    ...Object.entries(ACTIONS).map(([key, spec]) => row(`action \`${key.split('#')[1]}\``, actionPermission(spec))),
    ...Object.entries(PAGES).map(([path, spec]) => row(`page \`${path}\``, spec.permission)),
    ...Object.entries(ROUTES)
      .filter(([, spec]) => spec.permission !== 'better-auth')
      .map(([path, spec]) => row(`GET \`${path}\``, spec.permission as Permission | 'public')),
  ];
  return [head, rule, ...lines].join('\n');
}
