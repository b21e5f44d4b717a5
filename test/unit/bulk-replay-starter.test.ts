import { describe, expect, it } from 'vitest';
import { can, ROLES } from '../../lib/domain/roles';
import type { BulkAction } from '../../lib/ports/bulk-replay';
import { starterLoss, starterLossReason } from '../../lib/services/bulk-replay-batch';

const ACTIONS: BulkAction[] = ['REPLAY', 'DISCARD', 'REQUEUE'];

describe('a bulk job starter who lost the permission', () => {
  it('keeps the job exactly while enabled with a role the access table lets replay settlements', () => {
    for (const action of ACTIONS) {
      for (const role of ROLES) {
        const expected = can(role, 'replaySettlement') ? null : 'STARTER_ROLE_LACKS_PERMISSION';
        expect(starterLoss(action, { role, disabled: false }), `${action} ${role}`).toBe(expected);
        expect(starterLoss(action, { role, disabled: true }), `${action} ${role} disabled`).toBe('STARTER_DISABLED');
      }
    }
  });

  it('refuses a starter who no longer exists or whose role Keel does not know', () => {
    expect(starterLoss('REPLAY', null)).toBe('STARTER_NOT_FOUND');
    expect(starterLoss('DISCARD', { role: null, disabled: false })).toBe('STARTER_ROLE_LACKS_PERMISSION');
  });

  it('names the starter, the permission and the cause', () => {
    expect(starterLossReason('REQUEUE', 'sam', 'STARTER_ROLE_LACKS_PERMISSION')).toBe(
      "Cancelled by Keel: the job's starter, sam, lost the permission to requeue settlements " +
        '(their role no longer has it).',
    );
    expect(starterLossReason('REPLAY', 'sam', 'STARTER_NOT_FOUND')).toBe(
      "Cancelled by Keel: the job's starter, sam, lost the permission to replay dead-lettered settlements " +
        '(the account no longer exists).',
    );
  });
});
