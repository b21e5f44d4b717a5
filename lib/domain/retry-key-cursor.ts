import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { z } from 'zod';
import { isDigestHex } from './retry-key';
import { err, ok, type Result } from './result';
import { cursorText } from './text';

/** Where the next page starts: after `key` in step `stepId`, or after the whole step when `key` is null. */
export interface RetryKeyCursor {
  stepId: number;
  key: string | null;
}

/** The one refusal for a cursor this server did not make (tampered, truncated, foreign or from another secret). */
export type RetryKeyCursorError = { code: 'INVALID_CURSOR'; message: string };

export const CURSOR_NOT_MADE_HERE = 'This cursor was not made by Keel.';

// A retry key is an identity that never leaves the server in a URL, a log or a label
// (docs/design.md#retry-key): the cursor that carries one is sealed with AES-256-GCM, so a link
// in browser history or an access log shows neither the key nor the step.
const FORMAT = 1;
const KEY_INFO = 'keel retry-key cursor';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const STEP_BYTES = 8;
const KEY_BYTES = 32;
const HEADER_BYTES = 1 + NONCE_BYTES;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The cursor keys, derived from the server's session secret under their own label, so the
 * secret itself never encrypts anything and no other use of it shares them: 32 bytes of
 * AES-256 key, then 32 of HMAC key for the nonce.
 */
export function retryKeyCursorKey(secret: string | Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), KEY_INFO, 64));
}

const cipherKey = (key: Uint8Array) => key.subarray(0, 32);

/**
 * The nonce is synthetic (as in AES-GCM-SIV's construction): an HMAC of the cursor itself,
 * so one cursor always seals to the same token (a page's "Next" link is stable across
 * renders and refetches), and two different cursors never share a nonce.
 */
const syntheticNonce = (key: Uint8Array, plain: Buffer) =>
  createHmac('sha256', key.subarray(32)).update(aad).update(plain).digest().subarray(0, NONCE_BYTES);

const aad = Buffer.from([FORMAT]);

/**
 * One URL-safe token: base64url of format byte 1 ‖ 12-byte synthetic nonce ‖ the AES-256-GCM
 * ciphertext of (u64 big-endian step id ‖ the key's 32 bytes, when the cursor has one) ‖
 * 16-byte tag, the format byte authenticated too.
 */
export function encodeRetryKeyCursor(cursor: RetryKeyCursor, key: Uint8Array): string {
  if (!Number.isSafeInteger(cursor.stepId) || cursor.stepId < 1)
    throw new RangeError('A retry-key cursor names a step by its positive id');
  if (cursor.key !== null && !isDigestHex(cursor.key))
    throw new RangeError('A retry-key cursor holds a key of 64 lowercase hex digits');
  const plain = Buffer.alloc(STEP_BYTES + (cursor.key === null ? 0 : KEY_BYTES));
  plain.writeBigUInt64BE(BigInt(cursor.stepId));
  if (cursor.key !== null) Buffer.from(cursor.key, 'hex').copy(plain, STEP_BYTES);
  const nonce = syntheticNonce(key, plain);
  const cipher = createCipheriv('aes-256-gcm', cipherKey(key), nonce, { authTagLength: TAG_BYTES }).setAAD(aad);
  const sealed = Buffer.concat([cipher.update(plain), cipher.final()]);
  return Buffer.concat([aad, nonce, sealed, cipher.getAuthTag()]).toString('base64url');
}

const refused = (): Result<RetryKeyCursor, RetryKeyCursorError> =>
  err({ code: 'INVALID_CURSOR', message: CURSOR_NOT_MADE_HERE });

/** The cursor a token holds, or INVALID_CURSOR for any token `encodeRetryKeyCursor` did not make with this key. */
export function decodeRetryKeyCursor(token: string, key: Uint8Array): Result<RetryKeyCursor, RetryKeyCursorError> {
  if (typeof token !== 'string' || token.length > 200 || !BASE64URL.test(token)) return refused();
  const bytes = Buffer.from(token, 'base64url');
  // Node's decoder forgives stray bits in the last digit; only the canonical spelling of the bytes is ours.
  if (bytes.toString('base64url') !== token) return refused();
  const sealedLength = bytes.length - HEADER_BYTES - TAG_BYTES;
  if (bytes[0] !== FORMAT || (sealedLength !== STEP_BYTES && sealedLength !== STEP_BYTES + KEY_BYTES)) return refused();
  const decipher = createDecipheriv('aes-256-gcm', cipherKey(key), bytes.subarray(1, HEADER_BYTES), {
    authTagLength: TAG_BYTES,
  }).setAAD(aad);
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  let plain: Buffer;
  try {
    plain = Buffer.concat([decipher.update(bytes.subarray(HEADER_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
  } catch {
    // GCM's tag check: the only failure left once the lengths are right.
    return refused();
  }
  const stepId = plain.readBigUInt64BE();
  if (stepId < 1n || stepId > BigInt(Number.MAX_SAFE_INTEGER)) return refused();
  return ok({
    stepId: Number(stepId),
    key: plain.length === STEP_BYTES ? null : plain.subarray(STEP_BYTES).toString('hex'),
  });
}

/**
 * A retry-key list's cursor field, for a route's or a page's schema: a tampered,
 * truncated or foreign cursor is bad input with the message of any other malformed
 * cursor, refused before anything is read. Piped, so a token the text rules refuse
 * gets their message alone; an empty one is the first page, as before.
 */
export const retryKeyCursorField = (key: () => Uint8Array) =>
  cursorText(200).pipe(
    z.string().refine((token) => token === '' || decodeRetryKeyCursor(token, key()).ok, CURSOR_NOT_MADE_HERE),
  );
