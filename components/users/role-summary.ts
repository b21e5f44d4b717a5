import type { Role } from '@/lib/domain/roles';

/** What each role may do (docs/design.md#roles), for dialogs that say exactly what will change. */
export const ROLE_SUMMARY: Record<Role, string> = {
  viewer: 'reads every page and changes nothing',
  operator: 'reads, proposes recoveries and requests stops',
  approver: 'reads and confirms or rejects recovery proposals (never their own)',
  support: 'reads, replays or discards dead letters and requeues settlements',
  admin: 'does everything except confirm their own proposals, and manages users and roles',
};
