import { describe, expect, it } from 'vitest';
import { auditChanges, formatAuditChanges } from '../../lib/domain/audit-change';

describe('auditChanges', () => {
  it('a role change shows the old and the new role', () => {
    const changes = auditChanges({ role: 'operator' }, { role: 'approver' });
    expect(changes).toEqual([{ field: 'role', before: 'operator', after: 'approver' }]);
    expect(formatAuditChanges(changes)).toBe('role: operator → approver');
  });

  it('lists only the recorded fields whose value changed, in the order they were recorded', () => {
    const before = { status: 'STARTED', version: 4, stopRequested: false };
    const after = { stopRequestedBy: 'operator', version: 4, stopRequested: true, status: 'STARTED' };
    expect(formatAuditChanges(auditChanges(before, after))).toBe('stopRequested: false → true');
    expect(formatAuditChanges(auditChanges({ disabled: false }, { disabled: true, sessionsEnded: 2 }))).toBe(
      'disabled: false → true',
    );
  });

  it('is empty without a before object, for an unchanged value, or when after does not record the field', () => {
    expect(auditChanges(null, { role: 'admin' })).toEqual([]);
    expect(auditChanges(['a'], ['b'])).toEqual([]);
    expect(auditChanges({ role: 'admin' }, { role: 'admin' })).toEqual([]);
    expect(auditChanges({ status: 'STARTED' }, { message: 'refused' })).toEqual([]);
  });

  it('shows structured values as JSON', () => {
    expect(auditChanges({ limits: { retry: 3 } }, { limits: { retry: 5 } })).toEqual([
      { field: 'limits', before: '{"retry":3}', after: '{"retry":5}' },
    ]);
  });
});
