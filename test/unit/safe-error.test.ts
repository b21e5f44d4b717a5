import { describe, expect, it } from 'vitest';
import { loggableError } from '../../lib/server/safe-error';

describe('loggableError', () => {
  it('keeps the class, SQLSTATE and constraint but never the message', () => {
    const cause = Object.assign(new Error('receipt rcpt_0a1b2c3d is already queued'), { code: '23505', constraint: 'receipt_place_pkey', table: 'receipt_place' });
    const error = Object.assign(new Error('Failed query: insert ... rcpt_0a1b2c3d'), { cause });
    const logged = loggableError(error);
    expect(logged).toMatchObject({ name: 'Error', code: '23505', constraint: 'receipt_place_pkey', table: 'receipt_place' });
    expect(JSON.stringify(logged)).not.toContain('rcpt_0a1b2c3d');
  });

  it('describes a thrown non-error by its type only', () => {
    expect(loggableError('secret-token-value')).toEqual({ name: 'string' });
  });
});
