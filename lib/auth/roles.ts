/** The five roles of DESIGN.md section 1 and what each may do. */
export const ROLES = ['viewer', 'operator', 'approver', 'support', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const PERMISSIONS = {
  read: ['viewer', 'operator', 'approver', 'support', 'admin'],
  proposeRecovery: ['operator', 'admin'],
  requestStop: ['operator', 'admin'],
  decideRecovery: ['approver', 'admin'],
  /** Propose abandoning an execution, and confirm another person's proposal to (four eyes). */
  abandonExecution: ['approver', 'admin'],
  cancelProposal: ['operator', 'approver', 'support', 'admin'],
  replaySettlement: ['support', 'admin'],
  manageUsers: ['admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof PERMISSIONS;

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export function can(role: Role, permission: Permission): boolean {
  return (PERMISSIONS[permission] as readonly Role[]).includes(role);
}
