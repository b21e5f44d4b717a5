import { describe, expect, it } from 'vitest';
import { keepVerdict, keptVerdict, verdictKey, VERDICTS_KEPT } from '../../lib/queries/envelope-verdicts';

const key = (id: number, xmin = '100') =>
  verdictKey({ id, row_xmin: xmin, version: 0 }, { retryLimit: 3, stateLimit: 4 });

describe('kept envelope verdicts', () => {
  it('name the row version and the policy: another xmin, version or policy is another verdict', () => {
    expect(key(1)).not.toBe(key(1, '101'));
    expect(verdictKey({ id: 1, row_xmin: '100', version: 1 }, null)).not.toBe(
      verdictKey({ id: 1, row_xmin: '100', version: 0 }, null),
    );
    expect(key(1)).not.toBe(verdictKey({ id: 1, row_xmin: '100', version: 0 }, null));
  });

  it(`keep at most ${VERDICTS_KEPT}, the least recently used leaving first`, () => {
    keepVerdict(key(0), { kind: 'valid' });
    keepVerdict(key(1), {
      kind: 'corrupt',
      error: { kind: 'ChecksumMismatch' },
      message: 'fault-state checksum does not match',
    });
    for (let id = 2; id < VERDICTS_KEPT; id += 1) keepVerdict(key(id), { kind: 'valid' });
    // Step 0 is read again, so step 1 is now the oldest and the first to go.
    expect(keptVerdict(key(0))).toEqual({ kind: 'valid' });
    keepVerdict(key(VERDICTS_KEPT), { kind: 'valid' });
    expect(keptVerdict(key(1))).toBeUndefined();
    expect(keptVerdict(key(0))).toEqual({ kind: 'valid' });
    expect(keptVerdict(key(VERDICTS_KEPT))).toEqual({ kind: 'valid' });
  });
});
