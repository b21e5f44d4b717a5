import { describe, expect, it } from 'vitest';
import { CanonicalWriter } from '@/lib/domain/canonical-writer';
import {
  evidenceDigestHex as evidenceDigestResult,
  orchestrationEvidenceDigestHex as orchestrationEvidenceDigestResult,
  recoverRequestDigestHex,
  snapshotEvidenceDigestHex as snapshotEvidenceDigestResult,
  type EvidenceDigestInput,
  type OrchestrationEvidenceInput,
  type RecoverRequestDigestInput,
  type RecoverySnapshot,
} from '@/lib/domain/recovery';
import vectors from '../fixtures/vectors.json' with { type: 'json' };

/** The digest of a well-formed input; these tests feed only well-formed ones. */
function unwrap<E>(result: { ok: true; value: string } | { ok: false; error: E }): string {
  if (!result.ok) throw new Error(`unexpected digest error ${JSON.stringify(result.error)}`);
  return result.value;
}
const digestHexOf = (writer: CanonicalWriter) => unwrap(writer.digestResult());
const evidenceDigestHex = (input: EvidenceDigestInput) => unwrap(evidenceDigestResult(input));
const snapshotEvidenceDigestHex = (snapshot: RecoverySnapshot) => unwrap(snapshotEvidenceDigestResult(snapshot));
const orchestrationEvidenceDigestHex = (input: OrchestrationEvidenceInput) =>
  unwrap(orchestrationEvidenceDigestResult(input));

const failure = (kind: string, extra: object = {}) => ({ ok: false, error: { kind, ...extra } });
const evidenceVectors = vectors.evidenceDigest as unknown as { input: EvidenceDigestInput; digest: string }[];
const requestVectors = vectors.recoverRequestDigest as unknown as {
  input: RecoverRequestDigestInput;
  digest: string;
}[];
const baseEvidence = evidenceVectors[1]!.input;

describe('evidenceDigestHex', () => {
  it.each(evidenceVectors)('matches the shared vector for execution $input.id', ({ input, digest }) => {
    expect(evidenceDigestHex(input)).toBe(digest);
  });

  it('gives a snapshot the digest of its evidence fields, whatever the server time', () => {
    const { id, step, ...rest } = baseEvidence;
    const snapshot: RecoverySnapshot = { ...rest, executionId: id, latestStep: step, serverTimeMs: 1 };
    expect(snapshotEvidenceDigestHex(snapshot)).toBe(evidenceVectors[1]!.digest);
    expect(snapshotEvidenceDigestHex({ ...snapshot, serverTimeMs: 2_000_000_000_000 })).toBe(
      evidenceVectors[1]!.digest,
    );
  });

  it('writes a time before the epoch as BEFORE_EPOCH, seconds, sub-second nanoseconds', () => {
    const input: EvidenceDigestInput = { ...baseEvidence, updatedAtMs: -1_500, step: null };
    const expected = digestHexOf(
      new CanonicalWriter('oxide-batch.recovery-evidence.v1')
        .u64(input.id)
        .string(input.status)
        .u64(input.attempt)
        .u64(input.version)
        .string(input.owner)
        .string('BEFORE_EPOCH')
        .u64(1)
        .u64(500_000_000)
        .string('NO_STEP')
        .flag(true)
        .flag(false)
        .flag(false)
        .flag(true),
    );
    expect(evidenceDigestHex(input)).toBe(expected);
    expect(evidenceDigestHex({ ...input, updatedAtMs: 1_500 })).not.toBe(expected);
  });

  it('writes NO_CHECKPOINT for a step without one', () => {
    const step = { id: 9, status: 'STARTED' as const, checkpoint: null };
    const expected = digestHexOf(
      new CanonicalWriter('oxide-batch.recovery-evidence.v1')
        .u64(42)
        .string('UNKNOWN')
        .u64(1)
        .u64(5)
        .string('ABSENT')
        .string('AFTER_EPOCH')
        .u64(1_700_000_000)
        .u64(123_000_000)
        .u64(9)
        .string('STARTED')
        .string('NO_CHECKPOINT')
        .flag(true)
        .flag(false)
        .flag(false)
        .flag(true),
    );
    expect(evidenceDigestHex({ ...baseEvidence, step })).toBe(expected);
  });

  it.each<[string, Partial<EvidenceDigestInput>]>([
    ['id', { id: 43 }],
    ['status', { status: 'STARTED' }],
    ['attempt', { attempt: 2 }],
    ['version', { version: 6 }],
    ['owner', { owner: 'OTHER_PROCESS' }],
    ['updatedAt by one millisecond', { updatedAtMs: baseEvidence.updatedAtMs + 1 }],
    ['step', { step: null }],
    ['step status', { step: { ...baseEvidence.step!, status: 'FAILED' } }],
    [
      'checkpoint length',
      { step: { ...baseEvidence.step!, checkpoint: { ...baseEvidence.step!.checkpoint!, encodedLen: 58 } } },
    ],
    ['unknownCommit', { markers: { ...baseEvidence.markers, unknownCommit: false } }],
    ['completedPartition', { markers: { ...baseEvidence.markers, completedPartition: true } }],
    ['committedFlowDecision', { markers: { ...baseEvidence.markers, committedFlowDecision: true } }],
    ['ambiguousExternalEffect', { markers: { ...baseEvidence.markers, ambiguousExternalEffect: false } }],
  ])('changes with the %s', (_field, change) => {
    expect(evidenceDigestHex({ ...baseEvidence, ...change })).not.toBe(evidenceDigestHex(baseEvidence));
  });
});

describe('recoverRequestDigestHex', () => {
  const abandoned = requestVectors[0]!.input;
  const failed: RecoverRequestDigestInput = {
    ...abandoned,
    resultingStatus: 'FAILED',
    failure: { category: 'STALE_RECOVERED', id: 12 },
  };

  it.each(requestVectors)('matches the shared vector', ({ input, digest }) => {
    expect(recoverRequestDigestHex(input)).toEqual({ ok: true, value: digest });
  });

  it('binds a FAILED outcome with the lowercase category and the failure id', () => {
    const expected = digestHexOf(
      new CanonicalWriter('oxide-batch.operator-request.v1')
        .string('RECOVER')
        .string('execution:7')
        .optionalU64(3)
        .string('OPERATOR_CONFIRMED')
        .string('RECOVERY')
        .string('FAILED')
        .bytes(Buffer.from(abandoned.evidenceDigest, 'hex'))
        .flag(false)
        .string('stale_recovered')
        .u64(12),
    );
    expect(recoverRequestDigestHex(failed)).toEqual({ ok: true, value: expected });
  });

  it.each<[string, Partial<RecoverRequestDigestInput>]>([
    ['failure id', { failure: { category: 'STALE_RECOVERED', id: 13 } }],
    ['failure category', { failure: { category: 'UNKNOWN_COMMIT', id: 12 } }],
    ['observed version', { observedVersion: 4 }],
    ['absent observed version', { observedVersion: null }],
    ['reason code', { reasonCode: 'UNKNOWN_EFFECT' }],
    ['unknown commit', { unknownCommit: true }],
    ['execution id', { executionId: 8 }],
  ])('changes with the %s', (_field, change) => {
    const changed = recoverRequestDigestHex({ ...failed, ...change } as RecoverRequestDigestInput);
    expect(changed.ok).toBe(true);
    expect(changed).not.toEqual(recoverRequestDigestHex(failed));
  });

  it.each(['AB'.repeat(32), 'ab'.repeat(31), 'not hex'])('refuses evidence digest %j', (evidenceDigest) => {
    expect(recoverRequestDigestHex({ ...abandoned, evidenceDigest })).toEqual(failure('InvalidEvidenceDigest'));
  });

  it('refuses an outcome whose failure does not match its status', () => {
    const cases = [
      { ...abandoned, resultingStatus: 'FAILED' },
      { ...failed, resultingStatus: 'ABANDONED' },
      { ...abandoned, resultingStatus: 'COMPLETED' },
    ] as unknown as RecoverRequestDigestInput[];
    for (const input of cases) expect(recoverRequestDigestHex(input)).toEqual(failure('InvalidRecoveryOutcome'));
  });
});

describe('orchestrationEvidenceDigestHex', () => {
  const input: OrchestrationEvidenceInput = {
    executionId: 'orch-1',
    authenticationTag: 'ab'.repeat(32),
    fencingToken: 4,
    expiresAtMs: 1_700_000_000_000,
    leaseOwner: 'worker-a',
  };

  it('writes the tag, then execution id, tag, fencing token, expiry and owner', () => {
    const expected = digestHexOf(
      new CanonicalWriter('keel.orchestration-evidence.v1')
        .string('orch-1')
        .string('ab'.repeat(32))
        .u64(4)
        .u64(1_700_000_000_000)
        .string('worker-a'),
    );
    expect(orchestrationEvidenceDigestHex(input)).toBe(expected);
  });

  it.each<Partial<OrchestrationEvidenceInput>>([
    { executionId: 'orch-2' },
    { authenticationTag: 'cd'.repeat(32) },
    { fencingToken: 5 },
    { expiresAtMs: 1_700_000_000_001 },
    { leaseOwner: 'worker-b' },
  ])('changes with %o', (change) => {
    expect(orchestrationEvidenceDigestHex({ ...input, ...change })).not.toBe(orchestrationEvidenceDigestHex(input));
  });
});
