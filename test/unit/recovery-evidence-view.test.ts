import { describe, expect, it } from 'vitest';
import { evidenceDigestHex, orchestrationEvidenceDigestHex, type EvidenceDigestInput } from '@/lib/domain/recovery';
import { evidenceView } from '@/lib/domain/recovery-evidence-view';
import vectors from '../fixtures/vectors.json' with { type: 'json' };

const evidenceVectors = vectors.evidenceDigest as unknown as { input: EvidenceDigestInput; digest: string }[];

/** The evidence JSON a proposal stores for a vector's input, as `proposeRecovery` writes it. */
const stored = (input: EvidenceDigestInput, extra: object = {}) => ({
  executionId: input.id,
  status: input.status,
  attempt: input.attempt,
  version: input.version,
  owner: input.owner,
  updatedAtMs: input.updatedAtMs,
  serverTimeMs: input.updatedAtMs + 10_403_009,
  latestStep: input.step,
  markers: input.markers,
  inactivityMs: 10_403_009,
  clockOffsetMs: 3,
  observationWindowMs: 2.375,
  digestHex: 'ignored',
  ...extra,
});

describe('evidenceView (batch)', () => {
  it.each(evidenceVectors)(
    'lists the digest inputs in the order that recomputes the shared vector for execution $input.id',
    ({ input, digest }) => {
      const view = evidenceView('batch', stored(input));
      expect(view?.kind).toBe('batch');
      expect(view!.recomputedDigest).toBe(digest);
      expect({ ok: true, value: view!.recomputedDigest }).toEqual(evidenceDigestHex(input));
      expect(view!.digestInputs[0]).toEqual({
        label: 'Tag',
        encoding: 'string',
        value: 'oxide-batch.recovery-evidence.v1',
      });
    },
  );

  it('spells out the time and step fields the digest binds', () => {
    const input = evidenceVectors[1]!.input;
    const view = evidenceView('batch', stored(input));
    const byLabel = Object.fromEntries(view!.digestInputs.map((f) => [f.label, f.value]));
    expect(byLabel).toMatchObject({
      'updated_at side of the epoch': 'AFTER_EPOCH',
      'updated_at seconds': 1_700_000_000,
      'updated_at nanoseconds': 123_000_000,
      'Latest step id': 9,
      'Checkpoint schema': 'oxide-batch.checkpoint',
      unknown_commit: 1,
      completed_partition: 0,
    });
  });

  it('keeps the clock readings and settings stored beside the evidence, null where older proposals lack them', () => {
    const input = evidenceVectors[0]!.input;
    const full = evidenceView('batch', stored(input, { staleThresholdMs: 900_000, maxClockSkewMs: 5_000 }));
    expect(full).toMatchObject({
      inactivityMs: 10_403_009,
      clockOffsetMs: 3,
      observationWindowMs: 2.375,
      staleThresholdMs: 900_000,
      maxClockSkewMs: 5_000,
      latestStep: null,
    });
    const old = evidenceView('batch', stored(input, { clockOffsetMs: undefined, observationWindowMs: -1 }));
    expect(old).toMatchObject({
      clockOffsetMs: null,
      observationWindowMs: null,
      staleThresholdMs: null,
      maxClockSkewMs: null,
    });
  });

  it('recomputes a different digest when a bound field was altered after the fact', () => {
    const { input, digest } = evidenceVectors[1]!;
    expect(evidenceView('batch', stored(input, { version: input.version + 1 }))!.recomputedDigest).not.toBe(digest);
  });

  it.each<[string, unknown]>([
    ['not an object', 'evidence'],
    ['null', null],
    ['an array', []],
    ['an unknown status', stored(evidenceVectors[0]!.input, { status: 'RUNNING' })],
    ['an unknown owner', stored(evidenceVectors[0]!.input, { owner: 'ME' })],
    ['a negative version', stored(evidenceVectors[0]!.input, { version: -1 })],
    ['a fractional time', stored(evidenceVectors[0]!.input, { updatedAtMs: 1.5 })],
    ['a marker that is not a boolean', stored(evidenceVectors[0]!.input, { markers: { unknownCommit: 1 } })],
    ['a step without a status', stored(evidenceVectors[0]!.input, { latestStep: { id: 1 } })],
    [
      'a checkpoint without a schema',
      stored(evidenceVectors[1]!.input, { latestStep: { id: 1, status: 'STARTED', checkpoint: { formatVersion: 1 } } }),
    ],
  ])('gives null, never throwing, for evidence with %s', (_name, evidence) => {
    expect(evidenceView('batch', evidence)).toBeNull();
  });
});

describe('evidenceView (orchestration)', () => {
  const observed = {
    executionId: 'orch-7',
    authenticationTag: 'ab'.repeat(32),
    fencingToken: 4,
    expiresAtMs: 1_796_000_000_000,
    leaseOwner: 'demo-orchestrator-1',
  };

  it('lists the lease fields in the order that recomputes orchestrationEvidenceDigestHex', () => {
    const view = evidenceView('orchestration', { ...observed, serverTimeMs: 1_796_000_060_000, digestHex: 'x' });
    expect(view).toMatchObject({
      kind: 'orchestration',
      leaseOwner: 'demo-orchestrator-1',
      fencingToken: 4,
      serverTimeMs: 1_796_000_060_000,
    });
    expect({ ok: true, value: view!.recomputedDigest }).toEqual(orchestrationEvidenceDigestHex(observed));
    expect(view!.digestInputs.map((f) => f.label)).toEqual([
      'Tag',
      'Orchestration id',
      'Authentication tag',
      'Fencing token',
      'Lease expiry (epoch ms)',
      'Lease owner',
    ]);
  });

  it('gives null for a lease without a fencing token', () => {
    expect(evidenceView('orchestration', { ...observed, fencingToken: 'four' })).toBeNull();
  });
});
