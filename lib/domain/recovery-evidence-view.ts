import { isBatchStatus, isOwnerObservation, type BatchStatus, type OwnerObservation } from './batch-status';
import { CanonicalWriter } from './canonical-writer';
import type { CheckpointDescriptor, RecoveryMarkers, RecoveryStep } from './recovery';

/** One value the evidence digest binds, in the order it binds them, with its encoding. */
export interface DigestInputField {
  label: string;
  encoding: 'string' | 'u64';
  value: string | number;
}

interface DigestInputs {
  /** The fields in digest order, the tag first. */
  digestInputs: DigestInputField[];
  /** SHA-256 of exactly those fields: equal to the stored digest unless the evidence was altered. */
  recomputedDigest: string;
}

export interface BatchEvidenceView extends DigestInputs {
  kind: 'batch';
  executionId: number;
  status: BatchStatus;
  attempt: number;
  version: number;
  owner: OwnerObservation;
  updatedAtMs: number;
  /** The database's clock when the evidence was read. */
  serverTimeMs: number;
  inactivityMs: number;
  /** |database clock - Keel's clock| at the read; null on evidence that did not record it. */
  clockOffsetMs: number | null;
  observationWindowMs: number | null;
  /** The settings the evidence was judged against; null on evidence stored before they were kept. */
  staleThresholdMs: number | null;
  maxClockSkewMs: number | null;
  latestStep: RecoveryStep | null;
  markers: RecoveryMarkers;
}

export interface OrchestrationEvidenceView extends DigestInputs {
  kind: 'orchestration';
  executionId: string;
  leaseOwner: string;
  fencingToken: number;
  expiresAtMs: number;
  serverTimeMs: number | null;
}

export type EvidenceView = BatchEvidenceView | OrchestrationEvidenceView;

export const BATCH_EVIDENCE_TAG = 'oxide-batch.recovery-evidence.v1';
export const ORCHESTRATION_EVIDENCE_TAG = 'keel.orchestration-evidence.v1';
export const MARKER_KEYS = [
  'unknownCommit',
  'completedPartition',
  'committedFlowDecision',
  'ambiguousExternalEffect',
] as const;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isCount = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;
const isMs = (value: unknown): value is number => Number.isSafeInteger(value);
/** Clock readings are measured with a monotonic clock, so they may have fractions. */
const optionalDuration = (value: unknown): number | null =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;

function digestOf(tag: string, fields: DigestInputField[]): string {
  const writer = new CanonicalWriter(tag);
  for (const field of fields) {
    if (field.encoding === 'u64') writer.u64(field.value as number);
    else writer.string(String(field.value));
  }
  const digest = writer.digestResult();
  // A field the writer cannot encode shows as no digest, which never equals the proposal's.
  return digest.ok ? digest.value : '';
}

function withDigest(tag: string, fields: DigestInputField[]): DigestInputs {
  return {
    digestInputs: [{ label: 'Tag', encoding: 'string', value: tag }, ...fields],
    recomputedDigest: digestOf(tag, fields),
  };
}

function parseCheckpoint(value: unknown): CheckpointDescriptor | null | undefined {
  if (value === null) return null;
  if (!isObject(value)) return undefined;
  const { formatVersion, schemaId, schemaVersion, encodedLen } = value;
  if (!isCount(formatVersion) || typeof schemaId !== 'string' || !isCount(schemaVersion) || !isCount(encodedLen))
    return undefined;
  return { formatVersion, schemaId, schemaVersion, encodedLen };
}

function parseStep(value: unknown): RecoveryStep | null | undefined {
  if (value === null || value === undefined) return null;
  if (!isObject(value) || !isCount(value.id) || !isBatchStatus(value.status)) return undefined;
  const checkpoint = parseCheckpoint(value.checkpoint ?? null);
  return checkpoint === undefined ? undefined : { id: value.id, status: value.status, checkpoint };
}

function parseMarkers(value: unknown): RecoveryMarkers | undefined {
  if (!isObject(value) || !MARKER_KEYS.every((key) => typeof value[key] === 'boolean')) return undefined;
  return {
    unknownCommit: value.unknownCommit as boolean,
    completedPartition: value.completedPartition as boolean,
    committedFlowDecision: value.committedFlowDecision as boolean,
    ambiguousExternalEffect: value.ambiguousExternalEffect as boolean,
  };
}

/**
 * The fields of the evidence digest (docs/design.md#evidence-digest), in its order, so a page can show
 * exactly what the digest binds; `recomputedDigest` hashes this list itself.
 */
export function batchDigestInputs(evidence: {
  executionId: number;
  status: BatchStatus;
  attempt: number;
  version: number;
  owner: OwnerObservation;
  updatedAtMs: number;
  latestStep: RecoveryStep | null;
  markers: RecoveryMarkers;
}): DigestInputs {
  const magnitude = Math.abs(evidence.updatedAtMs);
  const fields: DigestInputField[] = [
    { label: 'Execution id', encoding: 'u64', value: evidence.executionId },
    { label: 'Status', encoding: 'string', value: evidence.status },
    { label: 'Attempt', encoding: 'u64', value: evidence.attempt },
    { label: 'Version', encoding: 'u64', value: evidence.version },
    { label: 'Owner', encoding: 'string', value: evidence.owner },
    {
      label: 'updated_at side of the epoch',
      encoding: 'string',
      value: evidence.updatedAtMs < 0 ? 'BEFORE_EPOCH' : 'AFTER_EPOCH',
    },
    { label: 'updated_at seconds', encoding: 'u64', value: Math.floor(magnitude / 1000) },
    { label: 'updated_at nanoseconds', encoding: 'u64', value: (magnitude % 1000) * 1_000_000 },
  ];
  const step = evidence.latestStep;
  if (step === null) fields.push({ label: 'Latest step', encoding: 'string', value: 'NO_STEP' });
  else {
    fields.push(
      { label: 'Latest step id', encoding: 'u64', value: step.id },
      { label: 'Latest step status', encoding: 'string', value: step.status },
    );
    if (step.checkpoint === null) fields.push({ label: 'Checkpoint', encoding: 'string', value: 'NO_CHECKPOINT' });
    else {
      fields.push(
        { label: 'Checkpoint format', encoding: 'u64', value: step.checkpoint.formatVersion },
        { label: 'Checkpoint schema', encoding: 'string', value: step.checkpoint.schemaId },
        { label: 'Checkpoint schema version', encoding: 'u64', value: step.checkpoint.schemaVersion },
        { label: 'Checkpoint encoded length', encoding: 'u64', value: step.checkpoint.encodedLen },
      );
    }
  }
  fields.push(
    { label: 'unknown_commit', encoding: 'u64', value: evidence.markers.unknownCommit ? 1 : 0 },
    { label: 'completed_partition', encoding: 'u64', value: evidence.markers.completedPartition ? 1 : 0 },
    { label: 'committed_flow_decision', encoding: 'u64', value: evidence.markers.committedFlowDecision ? 1 : 0 },
    { label: 'ambiguous_external_effect', encoding: 'u64', value: evidence.markers.ambiguousExternalEffect ? 1 : 0 },
  );
  return withDigest(BATCH_EVIDENCE_TAG, fields);
}

/** The fields of the orchestration evidence digest (docs/design.md#orchestration-evidence-digest), in its order. */
export function orchestrationDigestInputs(evidence: {
  executionId: string;
  authenticationTag: string;
  fencingToken: number;
  expiresAtMs: number;
  leaseOwner: string;
}): DigestInputs {
  return withDigest(ORCHESTRATION_EVIDENCE_TAG, [
    { label: 'Orchestration id', encoding: 'string', value: evidence.executionId },
    { label: 'Authentication tag', encoding: 'string', value: evidence.authenticationTag },
    { label: 'Fencing token', encoding: 'u64', value: evidence.fencingToken },
    { label: 'Lease expiry (epoch ms)', encoding: 'u64', value: evidence.expiresAtMs },
    { label: 'Lease owner', encoding: 'string', value: evidence.leaseOwner },
  ]);
}

function batchView(e: Json): BatchEvidenceView | null {
  const step = parseStep(e.latestStep);
  const markers = parseMarkers(e.markers);
  const { executionId, status, attempt, version, owner, updatedAtMs, serverTimeMs } = e;
  if (
    !isCount(executionId) ||
    !isBatchStatus(status) ||
    !isCount(attempt) ||
    !isCount(version) ||
    !isOwnerObservation(owner) ||
    !isMs(updatedAtMs) ||
    !isMs(serverTimeMs) ||
    step === undefined ||
    markers === undefined
  ) {
    return null;
  }
  const fields = { executionId, status, attempt, version, owner, updatedAtMs, latestStep: step, markers };
  return {
    kind: 'batch',
    ...fields,
    serverTimeMs,
    inactivityMs: isMs(e.inactivityMs) ? e.inactivityMs : serverTimeMs - updatedAtMs,
    clockOffsetMs: optionalDuration(e.clockOffsetMs),
    observationWindowMs: optionalDuration(e.observationWindowMs),
    staleThresholdMs: optionalDuration(e.staleThresholdMs),
    maxClockSkewMs: optionalDuration(e.maxClockSkewMs),
    ...batchDigestInputs(fields),
  };
}

function orchestrationView(e: Json): OrchestrationEvidenceView | null {
  const { executionId, authenticationTag, fencingToken, expiresAtMs, leaseOwner } = e;
  if (
    typeof executionId !== 'string' ||
    typeof authenticationTag !== 'string' ||
    !isCount(fencingToken) ||
    !isCount(expiresAtMs) ||
    typeof leaseOwner !== 'string'
  ) {
    return null;
  }
  return {
    kind: 'orchestration',
    executionId,
    leaseOwner,
    fencingToken,
    expiresAtMs,
    serverTimeMs: isMs(e.serverTimeMs) ? e.serverTimeMs : null,
    ...orchestrationDigestInputs({ executionId, authenticationTag, fencingToken, expiresAtMs, leaseOwner }),
  };
}

/**
 * Reads a proposal's stored evidence into what the proposal page shows. Evidence
 * that does not have the expected shape gives null (the page then shows it raw);
 * it never throws.
 */
export function evidenceView(targetKind: 'batch' | 'orchestration', evidence: unknown): EvidenceView | null {
  if (!isObject(evidence)) return null;
  return targetKind === 'batch' ? batchView(evidence) : orchestrationView(evidence);
}
