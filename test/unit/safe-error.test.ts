import { describe, expect, it } from 'vitest';
import { loggableError } from '../../lib/observability/safe-error';

class DatabaseError extends Error {
  constructor(message: string, fields: Record<string, string>) {
    super(message);
    // pg's DatabaseError names itself "error"; its class is what identifies it.
    this.name = 'error';
    Object.assign(this, fields);
  }
}

describe('loggableError', () => {
  it('keeps the class, SQLSTATE and constraint and nothing else', () => {
    const cause = new DatabaseError('duplicate key value violates unique constraint "receipt_place_pkey"', {
      code: '23505',
      constraint: 'receipt_place_pkey',
      table: 'receipt_place',
      detail: 'Key (receipt_id)=(rcpt_0a1b2c3d) already exists.',
    });
    const error = Object.assign(
      new Error('Failed query: insert into settle.receipt_place values ($1)\nparams: rcpt_0a1b2c3d'),
      { cause },
    );
    const logged = loggableError(error);
    expect(logged).toEqual({ name: 'Error', cause: 'DatabaseError', code: '23505', constraint: 'receipt_place_pkey' });
    expect(JSON.stringify(logged)).not.toContain('rcpt_0a1b2c3d');
  });

  it('never keeps the stack, whose first lines repeat a multi-line message', () => {
    const error = new Error('Failed query: select 1\nparams: secret-session-token');
    expect(error.stack).toContain('secret-session-token');
    expect(JSON.stringify(loggableError(error))).not.toContain('secret-session-token');
  });

  it('drops a code or constraint that is not an identifier, since it could be a value', () => {
    const error = Object.assign(new Error('x'), { code: 'value with spaces: rcpt_1', constraint: 'a"b' });
    expect(loggableError(error)).toEqual({ name: 'Error' });
    expect(loggableError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toEqual({
      name: 'Error',
      code: 'ECONNREFUSED',
    });
  });

  it('describes a thrown non-error by its type only', () => {
    expect(loggableError('secret-token-value')).toEqual({ name: 'string' });
  });
});
