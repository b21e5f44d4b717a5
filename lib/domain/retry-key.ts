import { createHash } from 'node:crypto';
import { isFaultPhase, type FaultPhase } from './batch-status';
import { err, ok, type Result } from './result';

/** Every digest Keel stores or compares is 32 bytes written as 64 lowercase hex digits. */
export const DIGEST_HEX_PATTERN = /^[0-9a-f]{64}$/;
export const ZERO_DIGEST_HEX = '0'.repeat(64);

export const isDigestHex = (value: unknown): value is string =>
  typeof value === 'string' && DIGEST_HEX_PATTERN.test(value);

/**
 * The 32 bytes of a digest given as bytes or lowercase hex, or null. Checked first
 * because `Buffer.from(text, 'hex')` silently drops what it cannot decode.
 */
export function digestBytes(value: Uint8Array | string): Buffer | null {
  if (typeof value === 'string') return isDigestHex(value) ? Buffer.from(value, 'hex') : null;
  return value instanceof Uint8Array && value.byteLength === 32 ? Buffer.from(value) : null;
}

const RETRY_KEY_DOMAIN = Buffer.from('oxide-batch/retry-key/1', 'utf8');
const MAX_U64 = (1n << 64n) - 1n;

export interface RetryKeyInput {
  /** The definition's `manifest_digest`. */
  definitionDigest: Uint8Array | string;
  /** The step's `step_logical_id`. */
  stepName: string;
  phase: FaultPhase;
  /** The committed checkpoint identity, as carried by the envelope. */
  checkpointDigest: Uint8Array | string;
  /** The stable item or output ordinal, not the retry ordinal. */
  ordinal: number | bigint;
}

export type RetryKeyError =
  | { kind: 'InvalidDigest'; field: 'definitionDigest' | 'checkpointDigest' }
  | { kind: 'InvalidStepName' }
  | { kind: 'UnknownEnumeration' }
  | { kind: 'InvalidOrdinal' };

function itemOrdinal(value: number | bigint): bigint | null {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) return null;
  if (typeof value !== 'number' && typeof value !== 'bigint') return null;
  const big = BigInt(value);
  return big >= 0n && big <= MAX_U64 ? big : null;
}

/**
 * The opaque retry key (docs/design.md#retry-key). It holds no item value, but it still
 * identifies one unit of work, so it is never logged and never a metric label.
 */
export function deriveRetryKey(input: RetryKeyInput): Result<Buffer, RetryKeyError> {
  if (typeof input !== 'object' || input === null) return err({ kind: 'InvalidDigest', field: 'definitionDigest' });
  const definition = digestBytes(input.definitionDigest);
  if (!definition) return err({ kind: 'InvalidDigest', field: 'definitionDigest' });
  const checkpoint = digestBytes(input.checkpointDigest);
  if (!checkpoint) return err({ kind: 'InvalidDigest', field: 'checkpointDigest' });
  // A lone surrogate has no UTF-8 form, so the runtime could never produce the same key.
  if (typeof input.stepName !== 'string' || input.stepName === '' || /\p{Surrogate}/u.test(input.stepName))
    return err({ kind: 'InvalidStepName' });
  if (!isFaultPhase(input.phase)) return err({ kind: 'UnknownEnumeration' });
  const ordinal = itemOrdinal(input.ordinal);
  if (ordinal === null) return err({ kind: 'InvalidOrdinal' });

  const stepName = Buffer.from(input.stepName, 'utf8');
  const stepNameLength = Buffer.alloc(8);
  stepNameLength.writeBigUInt64BE(BigInt(stepName.byteLength));
  const ordinalBytes = Buffer.alloc(8);
  ordinalBytes.writeBigUInt64BE(ordinal);
  // The phase has no length prefix; the 0x00 after it keeps the field boundary unambiguous.
  const digest = createHash('sha256')
    .update(RETRY_KEY_DOMAIN)
    .update(definition)
    .update(stepNameLength)
    .update(stepName)
    .update(Buffer.from(input.phase, 'utf8'))
    .update(Buffer.from([0]))
    .update(checkpoint)
    .update(ordinalBytes)
    .digest();
  return ok(digest);
}

export function deriveRetryKeyHex(input: RetryKeyInput): Result<string, RetryKeyError> {
  const key = deriveRetryKey(input);
  return key.ok ? ok(key.value.toString('hex')) : key;
}

/** What the UI shows of a key: its first 12 hex digits (the copy button carries the rest). */
export const retryKeyShortHex = (keyHex: string): string => keyHex.slice(0, 12);
