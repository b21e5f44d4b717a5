import 'server-only';
import {
  fromCanonicalJson,
  validateFor,
  type FaultPolicyError,
  type FaultStateEnvelope,
  type FaultStateFormatError,
} from '../domain/fault-state';
import type { FaultLimits } from './retry-keys-types';

export type { FaultLimits };

/** Whether a step's envelope validates under its policy; a corrupt one carries why. Never a key or a payload. */
export type Verdict =
  | { kind: 'valid' }
  | { kind: 'corrupt'; error: FaultStateFormatError | FaultPolicyError; message: string };

/** The columns a verdict is reached on, as a step row carries them. */
export interface StoredEnvelope {
  fault_state_format: number;
  fault_state_schema: string;
  fault_state_schema_version: number;
  fault_state_checksum: Buffer;
  fault_state_payload: unknown;
}

export function describeFaultStateError(error: FaultStateFormatError | FaultPolicyError): string {
  switch (error.kind) {
    case 'UnsupportedFormat':
      return 'fault-state format is unsupported';
    case 'UnsupportedSchemaVersion':
      return 'fault-state schema version is unsupported';
    case 'TooLarge':
      return `fault state exceeds ${error.maxBytes} bytes`;
    case 'Malformed':
      return 'fault state is malformed';
    case 'TooManyEntries':
      return `fault state retains more than ${error.max} keys`;
    case 'MalformedEntry':
      return 'fault-state entry is malformed';
    case 'UnknownEnumeration':
      return 'fault state contains an unknown enumeration value';
    case 'UnsortedEntries':
      return 'fault state is not digest-sorted';
    case 'DuplicateKey':
      return 'fault state repeats one retry key';
    case 'CheckpointMismatch':
      return 'fault state belongs to a superseded checkpoint';
    case 'ChecksumMismatch':
      return 'fault-state checksum does not match';
    case 'OrdinalAboveLimit':
      return `fault state retains an ordinal above ${error.max}`;
    case 'InvalidRetryLimit':
      return 'the fault policy retry limit is out of range';
    case 'InvalidRetryStateLimit':
      return 'the fault policy retry state limit is out of range';
  }
}

const corrupt = (error: FaultStateFormatError | FaultPolicyError): Verdict => ({
  kind: 'corrupt',
  error,
  message: describeFaultStateError(error),
});

/** Validates an envelope (format, checksum, then the policy bounds); the decoded envelope too when it is valid. */
export function judgeEnvelope(
  stored: StoredEnvelope,
  limits: FaultLimits | null,
): { verdict: Verdict; envelope: FaultStateEnvelope | null } {
  const parsed = fromCanonicalJson({
    formatId: stored.fault_state_schema,
    formatVersion: Number(stored.fault_state_format),
    schemaVersion: Number(stored.fault_state_schema_version),
    checksum: stored.fault_state_checksum,
    payload: stored.fault_state_payload,
  });
  if (!parsed.ok) return { verdict: corrupt(parsed.error), envelope: null };
  if (limits) {
    // The committed checkpoint's identity is the runtime's to derive, so only the policy bounds are checked here.
    const valid = validateFor(parsed.value, limits.retryLimit, limits.stateLimit, parsed.value.checkpoint);
    if (!valid.ok) return { verdict: corrupt(valid.error), envelope: null };
  }
  return { verdict: { kind: 'valid' }, envelope: parsed.value };
}

/**
 * Verdicts kept per row version, so a render reads and checksums only the envelopes it
 * has not judged (a corrupt-only render walks 1,000 steps; reading and checksumming
 * all their payloads each time cost most of its time). The key is the step id, the
 * row's `xmin` and `version`, and the policy: any update of the row, the payload
 * edited in place with its old checksum included, writes a new row version with a
 * new xmin. The checksum alone is no key (a damaged payload keeps it). Least recently
 * used out first; a verdict holds no key and no payload. The lists read outside any
 * transaction that writes steps: within one, two versions of a row share its xmin.
 */
export const VERDICTS_KEPT = 100_000;
const verdicts = new Map<string, Verdict>();

/**
 * The row version a verdict stands for: step id, xmin and version as Postgres reads them, and the policy judged under.
 */
export interface RowVersion {
  id: number;
  row_xmin: string;
  version: number | string;
}

export const verdictKey = (row: RowVersion, limits: FaultLimits | null) =>
  `${row.id}:${row.row_xmin}:${row.version}:${limits ? `${limits.retryLimit}/${limits.stateLimit}` : '-'}`;

export function keptVerdict(key: string): Verdict | undefined {
  const verdict = verdicts.get(key);
  if (verdict) {
    // Most recently used last: a Map iterates in insertion order.
    verdicts.delete(key);
    verdicts.set(key, verdict);
  }
  return verdict;
}

export function keepVerdict(key: string, verdict: Verdict) {
  verdicts.delete(key);
  verdicts.set(key, verdict);
  while (verdicts.size > VERDICTS_KEPT) verdicts.delete(verdicts.keys().next().value!);
}
