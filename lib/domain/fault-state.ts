import { createHash } from 'node:crypto';
import { isFailureCategory, isFaultPhase, type FailureCategory, type FaultPhase } from './batch-status';
import { totalResult, err, ok, type Result } from './result';
import { isDigestHex, ZERO_DIGEST_HEX } from './retry-key';

export const FAULT_STATE_FORMAT_ID = 'oxide-batch.fault-state';
export const FAULT_STATE_FORMAT_VERSION = 1;
export const FAULT_STATE_SCHEMA_VERSION = 1;
export const MAX_ENVELOPE_BYTES = 64 * 1024;
export const MAX_ENVELOPE_ENTRIES = 256;
export const MAX_RETRY_ORDINAL = 65_535;
export const MAX_RETRY_STATE_LIMIT = 256;
export const MAX_REVISION_BYTES = 128;

/** One retained retry key. It holds classification identity only: no item value, no error text. */
export interface FaultStateEntry {
  readonly key: string;
  readonly phase: FaultPhase;
  readonly category: FailureCategory;
  readonly ordinal: number;
  readonly revision: string;
}

/** Build one with `newEnvelope`, `fromCanonicalJson` or `reserveInEnvelope`, which keep its invariants. */
export interface FaultStateEnvelope {
  /** The checkpoint generation the entries belong to; zero exactly when there are none. */
  readonly checkpoint: string;
  /** Sorted by key, keys unique. */
  readonly entries: readonly FaultStateEntry[];
}

export type FaultStateFormatError =
  | { kind: 'UnsupportedFormat' }
  | { kind: 'UnsupportedSchemaVersion' }
  | { kind: 'TooLarge'; maxBytes: number }
  | { kind: 'Malformed' }
  | { kind: 'TooManyEntries'; max: number }
  | { kind: 'MalformedEntry' }
  | { kind: 'UnknownEnumeration' }
  | { kind: 'UnsortedEntries' }
  | { kind: 'DuplicateKey' }
  | { kind: 'CheckpointMismatch' }
  | { kind: 'ChecksumMismatch' }
  | { kind: 'OrdinalAboveLimit'; max: number };

/** Limits read from a definition manifest's fault policy that are out of range. */
export type FaultPolicyError = { kind: 'InvalidRetryLimit' } | { kind: 'InvalidRetryStateLimit' };

/** The FaultStateStore port's errors (docs/design.md#fault-state-store). */
export type FaultStateError =
  | { kind: 'CapacityExhausted'; max: number }
  | { kind: 'StaleReservation' }
  | { kind: 'Corrupt'; error: FaultStateFormatError }
  | { kind: 'Unbound' }
  | { kind: 'Unavailable' };

export const EMPTY_ENVELOPE: FaultStateEnvelope = Object.freeze({
  checkpoint: ZERO_DIGEST_HEX,
  entries: Object.freeze([]),
});
export const EMPTY_CHECKSUM_HEX = 'a491114819e0d3bd8b7ca004dc0636f95b45e2fcb1a67ddb5726beaea12f9922';

const tooLarge = (): FaultStateFormatError => ({ kind: 'TooLarge', maxBytes: MAX_ENVELOPE_BYTES });
const corrupt = (error: FaultStateFormatError): FaultStateError => ({ kind: 'Corrupt', error });

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const inRange = (value: unknown, min: number, max: number): value is number =>
  Number.isInteger(value) && (value as number) >= min && (value as number) <= max;

/** 0 is the first call; a retry ordinal counts re-invocations. */
export const isRetryOrdinal = (value: unknown): value is number => inRange(value, 0, MAX_RETRY_ORDINAL);
/** The largest retry ordinal a policy allows; an ordinal can never exceed 65535. */
export const isRetryLimit = (value: unknown): value is number => inRange(value, 0, MAX_RETRY_ORDINAL);
export const isRetryStateLimit = (value: unknown): value is number => inRange(value, 1, MAX_RETRY_STATE_LIMIT);

/** Unicode White_Space, as the runtime's `trim` sees it (JavaScript's `\s` would also strip U+FEFF). */
const OUTER_WHITESPACE = /^\p{White_Space}|\p{White_Space}$/u;
/** Controls, plus lone surrogates, which have no UTF-8 form the runtime could store. */
const FORBIDDEN_REVISION_CHARS = /[\p{Cc}\p{Cs}]/u;

export const isClassifierRevision = (value: unknown): value is string =>
  typeof value === 'string' &&
  value.length > 0 &&
  Buffer.byteLength(value, 'utf8') <= MAX_REVISION_BYTES &&
  !FORBIDDEN_REVISION_CHARS.test(value) &&
  !OUTER_WHITESPACE.test(value);

/** Field order matches the runtime's decoder, so one bad entry reports the same error in both. */
function parseEntry(value: unknown): Result<FaultStateEntry, FaultStateFormatError> {
  if (!isRecord(value) || !isDigestHex(value.key)) return err({ kind: 'MalformedEntry' });
  if (!isFaultPhase(value.phase) || !isFailureCategory(value.category)) return err({ kind: 'UnknownEnumeration' });
  if (!isRetryOrdinal(value.ordinal) || !isClassifierRevision(value.revision)) return err({ kind: 'MalformedEntry' });
  return ok(
    Object.freeze({
      key: value.key,
      phase: value.phase,
      category: value.category,
      ordinal: value.ordinal,
      revision: value.revision,
    }),
  );
}

function parseEntries(values: readonly unknown[]): Result<FaultStateEntry[], FaultStateFormatError> {
  const entries: FaultStateEntry[] = [];
  for (const value of values) {
    const entry = parseEntry(value);
    if (!entry.ok) return entry;
    entries.push(entry.value);
  }
  return ok(entries);
}

/** Empty state depends on no checkpoint; retained keys always depend on a real one. */
function sealed(checkpoint: string, entries: FaultStateEntry[]): Result<FaultStateEnvelope, FaultStateFormatError> {
  if ((entries.length === 0) !== (checkpoint === ZERO_DIGEST_HEX)) return err({ kind: 'CheckpointMismatch' });
  return ok(Object.freeze({ checkpoint, entries: Object.freeze(entries) }));
}

const byKey = (a: FaultStateEntry, b: FaultStateEntry): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Builds an envelope from entries in any order; `checkpointDigest` is lowercase hex. */
function newEnvelopeUnchecked(
  checkpointDigest: string,
  entries: Iterable<FaultStateEntry>,
): Result<FaultStateEnvelope, FaultStateFormatError> {
  if (!isDigestHex(checkpointDigest)) return err({ kind: 'Malformed' });
  const raw = [...entries];
  if (raw.length > MAX_ENVELOPE_ENTRIES) return err({ kind: 'TooManyEntries', max: MAX_ENVELOPE_ENTRIES });
  const parsed = parseEntries(raw);
  if (!parsed.ok) return parsed;
  const sorted = parsed.value.sort(byKey);
  if (sorted.some((entry, i) => i > 0 && sorted[i - 1]?.key === entry.key)) return err({ kind: 'DuplicateKey' });
  return sealed(checkpointDigest, sorted);
}

const entryJson = (entry: FaultStateEntry): string =>
  `{"category":${JSON.stringify(entry.category)},"key":${JSON.stringify(entry.key)},` +
  `"ordinal":${entry.ordinal},"phase":${JSON.stringify(entry.phase)},"revision":${JSON.stringify(entry.revision)}}`;

/** The exact bytes the checksum covers: compact, keys in alphabetical order, entries by key. */
function toCanonicalJsonUnchecked(envelope: FaultStateEnvelope): Result<Buffer, FaultStateFormatError> {
  const text =
    `{"checkpoint":${JSON.stringify(envelope.checkpoint)},` +
    `"entries":[${envelope.entries.map(entryJson).join(',')}]}`;
  const bytes = Buffer.from(text, 'utf8');
  return bytes.byteLength > MAX_ENVELOPE_BYTES ? err(tooLarge()) : ok(bytes);
}

function checksumUnchecked(envelope: FaultStateEnvelope): Result<Buffer, FaultStateFormatError> {
  const bytes = toCanonicalJson(envelope);
  return bytes.ok ? ok(createHash('sha256').update(bytes.value).digest()) : bytes;
}

function checksumHexUnchecked(envelope: FaultStateEnvelope): Result<string, FaultStateFormatError> {
  const sum = checksum(envelope);
  return sum.ok ? ok(sum.value.toString('hex')) : sum;
}

/** The shape checks after the size check, in the order of docs/design.md#fault-state-envelope. */
function envelopeFromJson(value: unknown): Result<FaultStateEnvelope, FaultStateFormatError> {
  if (!isRecord(value) || !isDigestHex(value.checkpoint) || !Array.isArray(value.entries)) {
    return err({ kind: 'Malformed' });
  }
  if (value.entries.length > MAX_ENVELOPE_ENTRIES) return err({ kind: 'TooManyEntries', max: MAX_ENVELOPE_ENTRIES });
  const entries = parseEntries(value.entries);
  if (!entries.ok) return entries;
  // `>=` rather than `>`: a repeated key is reported as unsorted, as the runtime does.
  if (entries.value.some((entry, i) => i > 0 && (entries.value[i - 1]?.key ?? '') >= entry.key)) {
    return err({ kind: 'UnsortedEntries' });
  }
  return sealed(value.checkpoint, entries.value);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeBytes(bytes: Uint8Array | string): Result<FaultStateEnvelope, FaultStateFormatError> {
  const size = typeof bytes === 'string' ? Buffer.byteLength(bytes, 'utf8') : bytes.byteLength;
  if (size > MAX_ENVELOPE_BYTES) return err(tooLarge());
  let value: unknown;
  try {
    value = JSON.parse(typeof bytes === 'string' ? bytes : strictUtf8.decode(bytes));
  } catch {
    return err({ kind: 'Malformed' });
  }
  return envelopeFromJson(value);
}

/**
 * Sizes a parsed jsonb payload by its compact JSON text. Key order does not change
 * that length, so a well-formed payload measures exactly its canonical byte length.
 */
function decodePayload(payload: unknown): Result<FaultStateEnvelope, FaultStateFormatError> {
  let text: unknown;
  try {
    text = JSON.stringify(payload);
  } catch {
    return err({ kind: 'Malformed' });
  }
  if (typeof text !== 'string') return err({ kind: 'Malformed' });
  if (Buffer.byteLength(text, 'utf8') > MAX_ENVELOPE_BYTES) return err(tooLarge());
  return envelopeFromJson(payload);
}

/**
 * Rebuilds the canonical bytes of a payload read back from jsonb, which keeps
 * neither key order nor whitespace, validating it on the way.
 */
function canonicalJsonFromPayloadUnchecked(payload: unknown): Result<Buffer, FaultStateFormatError> {
  const envelope = decodePayload(payload);
  return envelope.ok ? toCanonicalJson(envelope.value) : envelope;
}

/** The step row's `fault_state_schema`, `fault_state_format`, `fault_state_schema_version`, `fault_state_checksum`. */
export interface StoredFaultStateHeader {
  formatId: string;
  formatVersion: number;
  schemaVersion: number;
  checksum: Uint8Array;
}

/** Raw JSON text, or a payload already parsed from jsonb. */
export type StoredFaultState = StoredFaultStateHeader & ({ bytes: Uint8Array | string } | { payload: unknown });

/**
 * Decodes stored fault state, failing closed. Like the runtime, the checksum is
 * compared against the canonical bytes rebuilt from the parsed value, so either
 * input form validates the same way.
 */
function fromCanonicalJsonUnchecked(stored: StoredFaultState): Result<FaultStateEnvelope, FaultStateFormatError> {
  if (stored.formatId !== FAULT_STATE_FORMAT_ID || stored.formatVersion !== FAULT_STATE_FORMAT_VERSION) {
    return err({ kind: 'UnsupportedFormat' });
  }
  if (stored.schemaVersion !== FAULT_STATE_SCHEMA_VERSION) return err({ kind: 'UnsupportedSchemaVersion' });
  const envelope = 'bytes' in stored ? decodeBytes(stored.bytes) : decodePayload(stored.payload);
  if (!envelope.ok) return envelope;
  const sum = checksum(envelope.value);
  if (!sum.ok) return sum;
  if (!sum.value.equals(Buffer.from(stored.checksum))) return err({ kind: 'ChecksumMismatch' });
  return envelope;
}

/** Checks a decoded envelope against the step's fault policy and committed checkpoint. */
function validateForUnchecked(
  envelope: FaultStateEnvelope,
  retryLimit: number,
  stateLimit: number,
  checkpointDigest: string,
): Result<void, FaultStateFormatError | FaultPolicyError> {
  if (!isRetryLimit(retryLimit)) return err({ kind: 'InvalidRetryLimit' });
  if (!isRetryStateLimit(stateLimit)) return err({ kind: 'InvalidRetryStateLimit' });
  if (envelope.entries.length > stateLimit) return err({ kind: 'TooManyEntries', max: stateLimit });
  if (envelope.entries.some((entry) => entry.ordinal > retryLimit)) {
    return err({ kind: 'OrdinalAboveLimit', max: retryLimit });
  }
  if (envelope.entries.length > 0 && envelope.checkpoint !== checkpointDigest) {
    return err({ kind: 'CheckpointMismatch' });
  }
  return ok(undefined);
}

export const reservedOrdinal = (envelope: FaultStateEnvelope, key: string): number | null =>
  envelope.entries.find((entry) => entry.key === key)?.ordinal ?? null;

/**
 * The envelope after one compare-and-swap reservation: the ordinal must be exactly
 * the stored one plus one (1 for a new key), so a stale or concurrent writer loses
 * instead of spending an ordinal twice. A new key needs room under `stateLimit`,
 * and every retained entry counts until `clearResolvedFromEnvelope` drops it.
 */
function reserveInEnvelopeUnchecked(
  envelope: FaultStateEnvelope,
  reservation: FaultStateEntry,
  stateLimit: number,
  checkpointDigest: string,
): Result<FaultStateEnvelope, FaultStateError | FaultPolicyError> {
  if (!isRetryStateLimit(stateLimit)) return err({ kind: 'InvalidRetryStateLimit' });
  if (envelope.entries.length > 0 && envelope.checkpoint !== checkpointDigest) {
    return err(corrupt({ kind: 'CheckpointMismatch' }));
  }
  const stored = reservedOrdinal(envelope, reservation.key);
  const expected = (stored ?? 0) + 1;
  if (expected > MAX_RETRY_ORDINAL || reservation.ordinal !== expected) return err({ kind: 'StaleReservation' });
  const entry = parseEntry(reservation);
  if (!entry.ok) return err(corrupt(entry.error));
  if (stored === null && envelope.entries.length >= stateLimit) {
    return err({ kind: 'CapacityExhausted', max: stateLimit });
  }
  const others = envelope.entries.filter((existing) => existing.key !== reservation.key);
  const next = newEnvelope(checkpointDigest, [...others, entry.value]);
  if (!next.ok) return err(corrupt(next.error));
  // Refuse here what the store could not write: the stored payload is capped at 64 KiB.
  const bytes = toCanonicalJson(next.value);
  if (!bytes.ok) return err(corrupt(bytes.error));
  return next;
}

const resolvedSet = (keys: Iterable<string>): ReadonlySet<string> => (keys instanceof Set ? keys : new Set(keys));

export const unresolvedCount = (envelope: FaultStateEnvelope, resolvedKeys: Iterable<string>): number => {
  const resolved = resolvedSet(resolvedKeys);
  return envelope.entries.filter((entry) => !resolved.has(entry.key)).length;
};

/**
 * The envelope written by the commit that advances the checkpoint. Any key still
 * unresolved would belong to the superseded checkpoint, so that is corruption and
 * nothing may be written.
 */
function clearResolvedFromEnvelopeUnchecked(
  envelope: FaultStateEnvelope,
  resolvedKeys: Iterable<string>,
): Result<FaultStateEnvelope, FaultStateError> {
  if (unresolvedCount(envelope, resolvedKeys) > 0) return err(corrupt({ kind: 'CheckpointMismatch' }));
  return ok(EMPTY_ENVELOPE);
}

/** The step counter a reservation bumps; other phases keep the counts. */
export const retryCounterFor = (phase: FaultPhase): 'read' | 'process' | 'write' | null =>
  phase === 'read' || phase === 'process' || phase === 'write' ? phase : null;

// Malformed input (a missing field, a wrong type) is an error value or a safe answer, never a throw.
export const toCanonicalJson = totalResult(toCanonicalJsonUnchecked, () => ({ kind: 'Malformed' as const }));
export const checksum = totalResult(checksumUnchecked, () => ({ kind: 'Malformed' as const }));
export const checksumHex = totalResult(checksumHexUnchecked, () => ({ kind: 'Malformed' as const }));
export const fromCanonicalJson = totalResult(fromCanonicalJsonUnchecked, () => ({ kind: 'Malformed' as const }));
export const validateFor = totalResult(validateForUnchecked, () => ({ kind: 'Malformed' as const }));
export const reserveInEnvelope = totalResult(reserveInEnvelopeUnchecked, () => ({
  kind: 'Corrupt' as const,
  error: { kind: 'Malformed' as const },
}));
export const clearResolvedFromEnvelope = totalResult(clearResolvedFromEnvelopeUnchecked, () => ({
  kind: 'Corrupt' as const,
  error: { kind: 'Malformed' as const },
}));
export const newEnvelope = totalResult(newEnvelopeUnchecked, () => ({ kind: 'Malformed' as const }));
export const canonicalJsonFromPayload = totalResult(canonicalJsonFromPayloadUnchecked, () => ({
  kind: 'Malformed' as const,
}));
