import { describe, expect, it } from 'vitest';
import {
  describeForLog,
  isSensitiveKey,
  sanitizeLogArguments,
  sanitizeLogText,
  sanitizeLogValue,
} from '../../lib/observability/log-sanitizer';

const TOKEN = 'Zt4v0kq7Vb1tSESSIONTOKEN';
const RECEIPT = 'rcpt_9f8e7d6c';
const NOTE = 'call the bank before noon';

describe('log sanitizer', () => {
  it('redacts tokens, cookies, authorization, passwords, session/user ids, receipts, keys, notes at any depth', () => {
    for (const key of [
      'token',
      'sessionToken',
      'session_token',
      'ownerToken',
      'Authorization',
      'cookie',
      'set-cookie',
      'password',
      'newPassword',
      'secret',
      'sessionId',
      'session',
      'userId',
      'user_id',
      'receiptId',
      'receipt_ids',
      'retryKey',
      'checkpointKey',
      'note',
      'notes',
      'params',
      'detail',
      'query',
    ]) {
      expect(isSensitiveKey(key), key).toBe(true);
    }
    for (const key of ['requestId', 'code', 'constraint', 'level', 'idleMs', 'job', 'error'])
      expect(isSensitiveKey(key), key).toBe(false);
    const value = {
      requestId: 'r-1',
      request: { headers: { cookie: `better-auth.session_token=${TOKEN}` }, body: { note: NOTE } },
      items: [{ receiptId: RECEIPT }],
    };
    const text = JSON.stringify(sanitizeLogValue(value));
    for (const secret of [TOKEN, RECEIPT, NOTE]) expect(text).not.toContain(secret);
    expect(text).toContain('r-1');
  });

  it('reduces an error anywhere in the value to its class, SQLSTATE and constraint', () => {
    const cause = Object.assign(new Error(`invalid input syntax: "${RECEIPT}"`), { code: '22P02' });
    const error = Object.assign(
      new Error(`Failed query: select * from keel.session where token = $1\nparams: ${TOKEN}`),
      { cause, params: [TOKEN] },
    );
    const text = JSON.stringify(sanitizeLogValue({ nested: { error } }));
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(RECEIPT);
    expect(text).toContain('22P02');
    expect(JSON.stringify(sanitizeLogArguments([error, 'failed']))).not.toContain(TOKEN);
  });

  it('keeps only the first line of text, cut before params', () => {
    expect(sanitizeLogText(`Failed query: select 1 params: ${TOKEN}`)).toBe('Failed query: select 1');
    expect(sanitizeLogText(`first line\nparams: ${TOKEN}`)).toBe('first line');
    expect(sanitizeLogText('x'.repeat(1_000)).length).toBeLessThanOrEqual(301);
  });

  it('writes byte strings as their length, and survives cycles', () => {
    const cyclic: Record<string, unknown> = { bytes: Buffer.from(TOKEN) };
    cyclic.self = cyclic;
    expect(sanitizeLogValue(cyclic)).toEqual({ bytes: `[${TOKEN.length} bytes]`, self: '[circular]' });
  });

  it('prints a command-line failure without a database message', () => {
    const database = Object.assign(new Error(`Failed query: insert\nparams: ${RECEIPT}`), {
      cause: Object.assign(new Error(`"${RECEIPT}"`), { code: '23505' }),
    });
    expect(describeForLog(database)).toBe('Error 23505');
    expect(describeForLog(new Error('next build failed'))).toBe('next build failed (Error)');
  });
});
