import {
  failureCategorySnakeCase,
  isActive,
  isBatchStatus,
  isFailureCategory,
  isOwnerObservation,
  isStaleExecution,
  type BatchStatus,
  type FailureCategory,
  type OwnerObservation,
} from './batch-status';
import { CanonicalWriter } from './canonical-writer';
import { err, ok, type Result } from './result';
import { digestBytes } from './retry-key';

export const MIN_STALE_THRESHOLD_MS = 60_000;
export const MAX_STALE_THRESHOLD_MS = 86_400_000;
export const DEFAULT_STALE_THRESHOLD_MS = 900_000;
export const MIN_MAX_CLOCK_SKEW_MS = 100;
export const MAX_MAX_CLOCK_SKEW_MS = 60_000;
export const DEFAULT_MAX_CLOCK_SKEW_MS = 5_000;

/** Describes the latest step's checkpoint without its payload. */
export interface CheckpointDescriptor {
  formatVersion: number;
  schemaId: string;
  schemaVersion: number;
  /** `pg_column_size` of the stored payload. */
  encodedLen: number;
}

export interface RecoveryStep {
  id: number;
  status: BatchStatus;
  checkpoint: CheckpointDescriptor | null;
}

export interface RecoveryMarkers {
  unknownCommit: boolean;
  completedPartition: boolean;
  committedFlowDecision: boolean;
  ambiguousExternalEffect: boolean;
}

/** One value-redacted observation read with the database's clock (docs/design.md#recovery-snapshot). */
export interface RecoverySnapshot {
  executionId: number;
  status: BatchStatus;
  attempt: number;
  version: number;
  updatedAtMs: number;
  serverTimeMs: number;
  owner: OwnerObservation;
  latestStep: RecoveryStep | null;
  markers: RecoveryMarkers;
}

/** The durable facts the evidence digest binds (the shape of the shared vectors). */
export interface EvidenceDigestInput {
  id: number;
  status: BatchStatus;
  attempt: number;
  version: number;
  owner: OwnerObservation;
  updatedAtMs: number;
  step: RecoveryStep | null;
  markers: RecoveryMarkers;
}

/** A candidate snapshot, the clock evidence measured around it, and its digest. */
export interface RecoveryEvidence extends RecoverySnapshot {
  inactivityMs: number;
  /** |server time - local wall time| when the snapshot was read. */
  clockOffsetMs: number;
  /** The monotonic duration of the snapshot read. */
  observationWindowMs: number;
  digestHex: string;
}

function writeTimestamp(writer: CanonicalWriter, epochMs: number): void {
  const magnitude = Math.abs(epochMs);
  writer.string(epochMs < 0 ? 'BEFORE_EPOCH' : 'AFTER_EPOCH');
  writer.u64(Math.floor(magnitude / 1000));
  writer.u64((magnitude % 1000) * 1_000_000);
}

/** A digest input that is not the shape it claims to be: which field, never a throw. */
export type EvidenceDigestError = { kind: 'InvalidEvidence'; field: string };

const MAX_U64 = (1n << 64n) - 1n;
const isU64 = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 && BigInt(value) <= MAX_U64;
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
const invalid = (field: string) => err({ kind: 'InvalidEvidence' as const, field });

/** Checks every field the evidence digest reads; null when the input is well formed. */
function evidenceProblem(evidence: unknown): string | null {
  if (!isObject(evidence)) return 'evidence';
  if (!isU64(evidence.id) || evidence.id === 0) return 'id';
  if (!isBatchStatus(evidence.status)) return 'status';
  if (!isU64(evidence.attempt)) return 'attempt';
  if (!isU64(evidence.version)) return 'version';
  if (!isOwnerObservation(evidence.owner)) return 'owner';
  const updatedAtMs = evidence.updatedAtMs;
  if (typeof updatedAtMs !== 'number' || !Number.isSafeInteger(updatedAtMs)) return 'updatedAtMs';
  const step = evidence.step;
  if (step !== null) {
    if (!isObject(step)) return 'step';
    if (!isU64(step.id)) return 'step.id';
    if (!isBatchStatus(step.status)) return 'step.status';
    const checkpoint = step.checkpoint;
    if (checkpoint !== null) {
      if (!isObject(checkpoint)) return 'step.checkpoint';
      if (!isU64(checkpoint.formatVersion)) return 'step.checkpoint.formatVersion';
      if (typeof checkpoint.schemaId !== 'string') return 'step.checkpoint.schemaId';
      if (!isU64(checkpoint.schemaVersion)) return 'step.checkpoint.schemaVersion';
      if (!isU64(checkpoint.encodedLen)) return 'step.checkpoint.encodedLen';
    }
  }
  const markers = evidence.markers;
  if (!isObject(markers)) return 'markers';
  for (const name of ['unknownCommit', 'completedPartition', 'committedFlowDecision', 'ambiguousExternalEffect']) {
    if (typeof markers[name] !== 'boolean') return `markers.${name}`;
  }
  return null;
}

/**
 * Binds `updated_at` rather than the read time or the measured inactivity, so
 * anyone can recompute the digest while nothing durable changed, and any
 * lifecycle write or stop request changes it. Malformed input is an error value.
 */
export function evidenceDigestHex(evidence: EvidenceDigestInput): Result<string, EvidenceDigestError> {
  const problem = evidenceProblem(evidence);
  if (problem) return invalid(problem);
  const writer = new CanonicalWriter('oxide-batch.recovery-evidence.v1')
    .u64(evidence.id)
    .string(evidence.status)
    .u64(evidence.attempt)
    .u64(evidence.version)
    .string(evidence.owner);
  writeTimestamp(writer, evidence.updatedAtMs);
  const step = evidence.step;
  if (step === null) {
    writer.string('NO_STEP');
  } else {
    writer.u64(step.id).string(step.status);
    if (step.checkpoint === null) writer.string('NO_CHECKPOINT');
    else {
      const { formatVersion, schemaId, schemaVersion, encodedLen } = step.checkpoint;
      writer.u64(formatVersion).string(schemaId).u64(schemaVersion).u64(encodedLen);
    }
  }
  const { unknownCommit, completedPartition, committedFlowDecision, ambiguousExternalEffect } = evidence.markers;
  const digest = writer
    .flag(unknownCommit)
    .flag(completedPartition)
    .flag(committedFlowDecision)
    .flag(ambiguousExternalEffect)
    .digestResult();
  return digest.ok ? digest : invalid('evidence');
}

export const snapshotEvidenceDigestHex = (snapshot: RecoverySnapshot): Result<string, EvidenceDigestError> =>
  isObject(snapshot)
    ? evidenceDigestHex({
        id: snapshot.executionId,
        status: snapshot.status,
        attempt: snapshot.attempt,
        version: snapshot.version,
        owner: snapshot.owner,
        updatedAtMs: snapshot.updatedAtMs,
        step: snapshot.latestStep,
        markers: snapshot.markers,
      })
    : invalid('snapshot');

export type RecoverRequestDigestInput = {
  executionId: number;
  observedVersion: number | null;
  reasonCode: string;
  /** Lowercase hex of the evidence digest the approver confirmed. */
  evidenceDigest: string;
  unknownCommit: boolean;
} & (
  | { resultingStatus: 'FAILED'; failure: { category: FailureCategory; id: number } }
  | { resultingStatus: 'ABANDONED'; failure: null }
);

export type RecoverRequestDigestError =
  | { kind: 'InvalidEvidenceDigest' }
  | { kind: 'InvalidRecoveryOutcome' }
  | { kind: 'InvalidRequest'; field: string };

/** The `request_digest` of the APPLIED RECOVER operator request (docs/design.md#recover-request-digest). */
export function recoverRequestDigestHex(input: RecoverRequestDigestInput): Result<string, RecoverRequestDigestError> {
  if (!isObject(input)) return err({ kind: 'InvalidRequest', field: 'input' });
  const evidence = digestBytes(input.evidenceDigest);
  if (!evidence) return err({ kind: 'InvalidEvidenceDigest' });
  // Checked at run time too: the union only binds callers that are typed.
  const failed = input.resultingStatus === 'FAILED';
  if (!(failed || input.resultingStatus === 'ABANDONED') || failed !== (input.failure !== null)) {
    return err({ kind: 'InvalidRecoveryOutcome' });
  }
  if (!isU64(input.executionId) || input.executionId === 0)
    return err({ kind: 'InvalidRequest', field: 'executionId' });
  if (input.observedVersion !== null && !isU64(input.observedVersion))
    return err({ kind: 'InvalidRequest', field: 'observedVersion' });
  if (typeof input.reasonCode !== 'string') return err({ kind: 'InvalidRequest', field: 'reasonCode' });
  if (typeof input.unknownCommit !== 'boolean') return err({ kind: 'InvalidRequest', field: 'unknownCommit' });
  const failure = input.failure;
  if (failure !== null) {
    if (!isObject(failure) || !isFailureCategory(failure.category))
      return err({ kind: 'InvalidRequest', field: 'failure.category' });
    if (!isU64(failure.id)) return err({ kind: 'InvalidRequest', field: 'failure.id' });
  }
  const writer = new CanonicalWriter('oxide-batch.operator-request.v1')
    .string('RECOVER')
    .string(`execution:${input.executionId}`)
    .optionalU64(input.observedVersion)
    .string(input.reasonCode)
    .string('RECOVERY')
    .string(input.resultingStatus)
    .bytes(evidence)
    .flag(input.unknownCommit);
  if (failure) writer.string(failureCategorySnakeCase(failure.category)).u64(failure.id);
  else writer.string('');
  const digest = writer.digestResult();
  return digest.ok ? digest : err({ kind: 'InvalidRequest', field: 'input' });
}

export interface OrchestrationEvidenceInput {
  executionId: string;
  authenticationTag: string;
  fencingToken: number;
  expiresAtMs: number;
  leaseOwner: string;
}

/** Evidence for taking over an orchestration whose lease expired (docs/design.md#orchestration-evidence-digest). */
export function orchestrationEvidenceDigestHex(input: OrchestrationEvidenceInput): Result<string, EvidenceDigestError> {
  if (!isObject(input)) return invalid('evidence');
  for (const field of ['executionId', 'authenticationTag', 'leaseOwner'] as const) {
    if (typeof input[field] !== 'string') return invalid(field);
  }
  if (!isU64(input.fencingToken)) return invalid('fencingToken');
  if (!isU64(input.expiresAtMs)) return invalid('expiresAtMs');
  const digest = new CanonicalWriter('keel.orchestration-evidence.v1')
    .string(input.executionId)
    .string(input.authenticationTag)
    .u64(input.fencingToken)
    .u64(input.expiresAtMs)
    .string(input.leaseOwner)
    .digestResult();
  return digest.ok ? digest : invalid('evidence');
}

export interface ProposerSettings {
  thresholdMs: number;
  maxSkewMs: number;
}

export type ProposerSettingsError =
  | { kind: 'InvalidStaleThreshold'; valueMs: number; minMs: number; maxMs: number }
  | { kind: 'InvalidMaxClockSkew'; valueMs: number; minMs: number; maxMs: number };

const within = (value: number, min: number, max: number): boolean =>
  Number.isFinite(value) && value >= min && value <= max;

export function validateProposerSettings(settings: ProposerSettings): Result<ProposerSettings, ProposerSettingsError> {
  const { thresholdMs, maxSkewMs } = isObject(settings) ? settings : { thresholdMs: Number.NaN, maxSkewMs: Number.NaN };
  if (!within(thresholdMs, MIN_STALE_THRESHOLD_MS, MAX_STALE_THRESHOLD_MS)) {
    return err({
      kind: 'InvalidStaleThreshold',
      valueMs: thresholdMs,
      minMs: MIN_STALE_THRESHOLD_MS,
      maxMs: MAX_STALE_THRESHOLD_MS,
    });
  }
  if (!within(maxSkewMs, MIN_MAX_CLOCK_SKEW_MS, MAX_MAX_CLOCK_SKEW_MS)) {
    return err({
      kind: 'InvalidMaxClockSkew',
      valueMs: maxSkewMs,
      minMs: MIN_MAX_CLOCK_SKEW_MS,
      maxMs: MAX_MAX_CLOCK_SKEW_MS,
    });
  }
  return ok({ thresholdMs, maxSkewMs });
}

export type ClockEvidenceReason =
  | 'ServerTimeWentBackwards'
  | 'ReadWindowNegative'
  | 'ReadWindowExceedsSkew'
  | 'WallClockSkewExceeded'
  | 'UpdatedAfterServerTime';

export type ProposerError =
  | ProposerSettingsError
  | { kind: 'ClockEvidenceUnusable'; reason: ClockEvidenceReason }
  | { kind: 'NotRecoverable'; status: BatchStatus }
  | { kind: 'OwnedByCurrentProcess' }
  | { kind: 'NotStale'; inactivityMs: number; thresholdMs: number }
  | EvidenceDigestError;

export interface CandidateClock extends ProposerSettings {
  /** The server time of the last snapshot this process saw, or null before the first. */
  lastServerTimeMs: number | null;
  /** Monotonic readings (e.g. `performance.now()`) taken just before and after the read. */
  readStartedMonoMs: number;
  readFinishedMonoMs: number;
  /** This process's wall clock at the read. */
  localWallMs: number;
}

// Each test is written as "not within bounds" so a NaN reading fails closed.
function clockProblem(snapshot: RecoverySnapshot, clock: CandidateClock): ClockEvidenceReason | null {
  if (clock.lastServerTimeMs !== null && !(snapshot.serverTimeMs >= clock.lastServerTimeMs)) {
    return 'ServerTimeWentBackwards';
  }
  const window = clock.readFinishedMonoMs - clock.readStartedMonoMs;
  if (!(window >= 0)) return 'ReadWindowNegative';
  if (!(window <= clock.maxSkewMs)) return 'ReadWindowExceedsSkew';
  if (!(Math.abs(snapshot.serverTimeMs - clock.localWallMs) <= clock.maxSkewMs)) return 'WallClockSkewExceeded';
  if (!(snapshot.updatedAtMs <= snapshot.serverTimeMs)) return 'UpdatedAfterServerTime';
  return null;
}

/**
 * The proposer rules (docs/design.md#proposer-rules), in order. Staleness is measured against
 * the database's clock only; the local clocks just decide whether that
 * measurement can be trusted.
 */
export function evaluateCandidate(
  snapshot: RecoverySnapshot,
  clock: CandidateClock,
): Result<RecoveryEvidence, ProposerError> {
  if (!isObject(clock)) return invalid('clock');
  const settings = validateProposerSettings(clock);
  if (!settings.ok) return settings;
  // The digest's checks cover every durable field the rules below read.
  const digest = snapshotEvidenceDigestHex(snapshot);
  if (!digest.ok) return digest;
  if (typeof snapshot.serverTimeMs !== 'number' || !Number.isSafeInteger(snapshot.serverTimeMs))
    return invalid('serverTimeMs');
  const reason = clockProblem(snapshot, clock);
  if (reason) return err({ kind: 'ClockEvidenceUnusable', reason });
  const inactivityMs = snapshot.serverTimeMs - snapshot.updatedAtMs;
  if (snapshot.status !== 'UNKNOWN') {
    if (!isActive(snapshot.status)) return err({ kind: 'NotRecoverable', status: snapshot.status });
    if (snapshot.owner === 'CURRENT_PROCESS') return err({ kind: 'OwnedByCurrentProcess' });
    if (!isStaleExecution(snapshot.status, inactivityMs, clock.thresholdMs)) {
      return err({ kind: 'NotStale', inactivityMs, thresholdMs: clock.thresholdMs });
    }
  }
  return ok({
    ...snapshot,
    inactivityMs,
    clockOffsetMs: Math.abs(snapshot.serverTimeMs - clock.localWallMs),
    observationWindowMs: clock.readFinishedMonoMs - clock.readStartedMonoMs,
    digestHex: digest.value,
  });
}
