/** The five roles and what each may do (docs/design.md#roles). */
export const ROLES = ['viewer', 'operator', 'approver', 'support', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = {
  read: ['viewer', 'operator', 'approver', 'support', 'admin'],
  proposeRecovery: ['operator', 'admin'],
  requestStop: ['operator', 'admin'],
  decideRecovery: ['approver', 'admin'],
  /** Propose abandoning an execution, and confirm another person's proposal to (four eyes). */
  abandonExecution: ['approver', 'admin'],
  // Only a role that may propose (a takeover, or an abandon) ever has a proposal of its own to withdraw.
  cancelProposal: ['operator', 'approver', 'admin'],
  cancelAnyProposal: ['admin'],
  replaySettlement: ['support', 'admin'],
  manageUsers: ['admin'],
  manageWebhooks: ['admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof PERMISSIONS;

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export function can(role: Role, permission: Permission): boolean {
  return (PERMISSIONS[permission] as readonly Role[]).includes(role);
}

/**
 * Each server action's permission, declared once: action() checks it before parsing
 * and the action's service asserts the same constant (defence in depth for callers
 * that reach a service without the wrapper, such as tests and workers).
 */
export const ACTION_PERMISSIONS = {
  'recovery.propose': 'proposeRecovery',
  'recovery.confirm': 'decideRecovery',
  'recovery.reject': 'decideRecovery',
  'recovery.cancel': 'cancelProposal',
  'execution.request_stop': 'requestStop',
  'execution.abandon.propose': 'abandonExecution',
  'settlement.replay': 'replaySettlement',
  'settlement.discard': 'replaySettlement',
  'settlement.requeue': 'replaySettlement',
  'settlement.bulk_replay.preview': 'replaySettlement',
  'settlement.bulk_replay.start': 'replaySettlement',
  'settlement.bulk_replay.cancel': 'replaySettlement',
  'user.create': 'manageUsers',
  'user.disable': 'manageUsers',
  'user.enable': 'manageUsers',
  'user.role': 'manageUsers',
  'webhook.send_test': 'manageWebhooks',
  'webhook.retry': 'manageWebhooks',
  'session.sign_out': 'read',
  // Every role sets where it sees times, for its own account only.
  'user.time_zone': 'read',
} as const satisfies Record<string, Permission>;

export type ActionName = keyof typeof ACTION_PERMISSIONS;

export function isActionName(value: string): value is ActionName {
  return Object.hasOwn(ACTION_PERMISSIONS, value);
}

/** Whether the role may take the action at all (the action-level check). */
export function mayTake(role: Role, action: ActionName): boolean {
  return can(role, ACTION_PERMISSIONS[action]);
}

/**
 * The one statement of who may cancel a proposal: its proposer while their role may
 * still cancel, or a role that may cancel any (admin). The page's button, the
 * action and the service all ask this.
 */
export function mayCancelProposal(actor: { id: string; role: Role }, proposerId: string): boolean {
  if (!mayTake(actor.role, 'recovery.cancel')) return false;
  return actor.id === proposerId || can(actor.role, 'cancelAnyProposal');
}
