import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  CURSOR_NOT_MADE_HERE,
  decodeRetryKeyCursor,
  encodeRetryKeyCursor,
  retryKeyCursorField,
  retryKeyCursorKey,
  type RetryKeyCursor,
} from '@/lib/domain/retry-key-cursor';
import { parseInput } from '@/lib/server/parse-input';

const SECRET = 'a-session-secret-of-at-least-32-characters';
const KEY = retryKeyCursorKey(SECRET);
const RETRY_KEY = '3f'.repeat(16) + '0123456789abcdef'.repeat(2);
const INSIDE: RetryKeyCursor = { stepId: 4_321, key: RETRY_KEY };
const AFTER_STEP: RetryKeyCursor = { stepId: 77, key: null };
const REFUSED = { ok: false, error: { code: 'INVALID_CURSOR', message: CURSOR_NOT_MADE_HERE } };
const BASE64URL_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

describe('retry-key cursor key', () => {
  it('is 64 bytes (cipher and nonce keys) from the secret under its own label: stable, not it, per secret', () => {
    expect(KEY).toHaveLength(64);
    expect(retryKeyCursorKey(SECRET).equals(KEY)).toBe(true);
    expect(retryKeyCursorKey(`${SECRET}!`).equals(KEY)).toBe(false);
    expect(KEY.toString('hex')).not.toContain(Buffer.from(SECRET).subarray(0, 32).toString('hex'));
  });
});

describe('sealed retry-key cursor', () => {
  it('round-trips a cursor inside a step, after a whole step, and the largest step id', () => {
    for (const cursor of [INSIDE, AFTER_STEP, { stepId: Number.MAX_SAFE_INTEGER, key: RETRY_KEY }]) {
      expect(decodeRetryKeyCursor(encodeRetryKeyCursor(cursor, KEY), KEY)).toEqual({ ok: true, value: cursor });
    }
  });

  it('is URL-safe, short, the same for the same cursor, and holds neither the key (hex, base64) nor its bytes', () => {
    const token = encodeRetryKeyCursor(INSIDE, KEY);
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(token.length).toBeLessThanOrEqual(200);
    // A page's "Next" link stays the same across renders; another cursor gets another nonce and token.
    expect(encodeRetryKeyCursor(INSIDE, KEY)).toBe(token);
    const neighbour = encodeRetryKeyCursor({ ...INSIDE, stepId: INSIDE.stepId + 1 }, KEY);
    expect(neighbour).not.toBe(token);
    expect(
      Buffer.from(neighbour, 'base64url').subarray(1, 13).equals(Buffer.from(token, 'base64url').subarray(1, 13)),
    ).toBe(false);
    const keyBytes = Buffer.from(RETRY_KEY, 'hex');
    for (const spelling of [
      RETRY_KEY,
      RETRY_KEY.toUpperCase(),
      keyBytes.toString('base64').replace(/=+$/, ''),
      keyBytes.toString('base64url'),
    ]) {
      expect(token).not.toContain(spelling);
      expect(token.toLowerCase()).not.toContain(spelling.toLowerCase().slice(0, 16));
    }
    expect(Buffer.from(token, 'base64url').includes(keyBytes)).toBe(false);
    expect(Buffer.from(token, 'base64url').includes(keyBytes.subarray(0, 8))).toBe(false);
  });

  it('refuses a token with any byte changed, as INVALID_CURSOR', () => {
    for (const cursor of [INSIDE, AFTER_STEP]) {
      const bytes = Buffer.from(encodeRetryKeyCursor(cursor, KEY), 'base64url');
      for (let i = 0; i < bytes.length; i += 1) {
        for (const flip of [0x01, 0x80]) {
          const tampered = Buffer.from(bytes);
          tampered.writeUInt8(tampered.readUInt8(i) ^ flip, i);
          expect(decodeRetryKeyCursor(tampered.toString('base64url'), KEY)).toEqual(REFUSED);
        }
      }
    }
  });

  it('refuses a token with any character changed, even one the base64 decoder would forgive', () => {
    // 92 digits spell the long form's 69 bytes exactly; the short form's last digit has 4 spare bits.
    for (const token of [encodeRetryKeyCursor(INSIDE, KEY), encodeRetryKeyCursor(AFTER_STEP, KEY)]) {
      for (let i = 0; i < token.length; i += 1) {
        for (const digit of [...BASE64URL_DIGITS, '+', '/', '=', '.']) {
          if (digit === token[i]) continue;
          expect(decodeRetryKeyCursor(token.slice(0, i) + digit + token.slice(i + 1), KEY)).toEqual(REFUSED);
        }
      }
    }
  });

  it('refuses a truncated or extended token', () => {
    const token = encodeRetryKeyCursor(INSIDE, KEY);
    for (let length = 0; length < token.length; length += 1)
      expect(decodeRetryKeyCursor(token.slice(0, length), KEY)).toEqual(REFUSED);
    for (const suffix of ['A', 'AA', 'AAAA', '=']) expect(decodeRetryKeyCursor(token + suffix, KEY)).toEqual(REFUSED);
    // The short form (no key) must not be made from the long one by cutting off the key's bytes.
    const bytes = Buffer.from(token, 'base64url');
    const cut = Buffer.concat([bytes.subarray(0, 13 + 8), bytes.subarray(bytes.length - 16)]);
    expect(decodeRetryKeyCursor(cut.toString('base64url'), KEY)).toEqual(REFUSED);
  });

  it('refuses a cursor sealed under another secret, and the old plain forms', () => {
    expect(decodeRetryKeyCursor(encodeRetryKeyCursor(INSIDE, retryKeyCursorKey(`${SECRET}-other`)), KEY)).toEqual(
      REFUSED,
    );
    for (const plain of [
      `${INSIDE.stepId}.${RETRY_KEY}`,
      String(AFTER_STEP.stepId),
      Buffer.from(`${INSIDE.stepId}.${RETRY_KEY}`).toString('base64url'),
      '',
    ]) {
      expect(decodeRetryKeyCursor(plain, KEY)).toEqual(REFUSED);
    }
    expect(decodeRetryKeyCursor(undefined as unknown as string, KEY)).toEqual(REFUSED);
  });

  it('will not seal what is not a cursor', () => {
    expect(() => encodeRetryKeyCursor({ stepId: 0, key: null }, KEY)).toThrow(RangeError);
    expect(() => encodeRetryKeyCursor({ stepId: 1.5, key: null }, KEY)).toThrow(RangeError);
    expect(() => encodeRetryKeyCursor({ stepId: 1, key: RETRY_KEY.toUpperCase() }, KEY)).toThrow(RangeError);
  });
});

describe('retry-key cursor field', () => {
  const schema = z.object({ cursor: retryKeyCursorField(() => KEY).optional() });

  it('takes a sealed cursor, none, or an empty one (the first page)', () => {
    const token = encodeRetryKeyCursor(INSIDE, KEY);
    expect(parseInput(schema, { cursor: token })).toEqual({ ok: true, value: { cursor: token } });
    expect(parseInput(schema, {})).toEqual({ ok: true, value: {} });
    expect(parseInput(schema, { cursor: '' })).toEqual({ ok: true, value: { cursor: '' } });
  });

  it('answers a tampered, foreign or unprintable cursor with the same INVALID_INPUT field error, once', () => {
    const bytes = Buffer.from(encodeRetryKeyCursor(INSIDE, KEY), 'base64url');
    bytes.writeUInt8(bytes.readUInt8(30) ^ 1, 30);
    for (const bad of [
      bytes.toString('base64url'),
      encodeRetryKeyCursor(INSIDE, retryKeyCursorKey('another-secret')),
      `4.${RETRY_KEY}`,
      'a\u0001b',
      'a b',
    ]) {
      expect(parseInput(schema, { cursor: bad })).toEqual({
        ok: false,
        error: { fieldErrors: { cursor: [CURSOR_NOT_MADE_HERE] }, auditReason: 'Invalid input: cursor.' },
      });
    }
  });
});
