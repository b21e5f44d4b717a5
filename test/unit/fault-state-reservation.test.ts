import { describe, expect, it } from 'vitest';
import {
  checksumHex,
  clearResolvedFromEnvelope,
  EMPTY_CHECKSUM_HEX,
  EMPTY_ENVELOPE,
  reservedOrdinal,
  reserveInEnvelope,
  retryCounterFor,
  toCanonicalJson,
  unresolvedCount,
  validateFor,
} from '@/lib/domain/fault-state';
import { CHECKPOINT, entry, envelopeOf, failure, key, value, ZERO } from '../support/fault-state-fixtures';

const OTHER_CHECKPOINT = '33'.repeat(32);
const corrupt = (kind: string) => ({
  ok: false,
  error: { kind: 'Corrupt', error: kind === 'TooLarge' ? { kind, maxBytes: 65_536 } : { kind } },
});

describe('validateFor', () => {
  const envelope = envelopeOf([entry(1, { ordinal: 2 }), entry(2, { ordinal: 3 })]);

  it('accepts state within the policy and the committed checkpoint', () => {
    expect(validateFor(envelope, 3, 2, CHECKPOINT)).toEqual({ ok: true, value: undefined });
  });

  it('reports TooManyEntries above the state limit, naming it', () => {
    expect(validateFor(envelope, 3, 1, CHECKPOINT)).toEqual(failure('TooManyEntries', { max: 1 }));
  });

  it('reports OrdinalAboveLimit for an ordinal the retry limit cannot reach', () => {
    expect(validateFor(envelope, 2, 2, CHECKPOINT)).toEqual(failure('OrdinalAboveLimit', { max: 2 }));
  });

  it('reports CheckpointMismatch when entries belong to another checkpoint', () => {
    expect(validateFor(envelope, 3, 2, OTHER_CHECKPOINT)).toEqual(failure('CheckpointMismatch'));
  });

  it('checks in the order TooManyEntries, OrdinalAboveLimit, CheckpointMismatch', () => {
    expect(validateFor(envelope, 0, 1, OTHER_CHECKPOINT)).toEqual(failure('TooManyEntries', { max: 1 }));
    expect(validateFor(envelope, 0, 2, OTHER_CHECKPOINT)).toEqual(failure('OrdinalAboveLimit', { max: 0 }));
  });

  it('accepts the empty envelope against any checkpoint', () => {
    expect(validateFor(EMPTY_ENVELOPE, 0, 1, OTHER_CHECKPOINT).ok).toBe(true);
  });

  it.each([0, 257, 1.5])('refuses state limit %s', (limit) => {
    expect(validateFor(envelope, 3, limit, CHECKPOINT)).toEqual(failure('InvalidRetryStateLimit'));
  });

  it.each([-1, 65_536, 2.5])('refuses retry limit %s', (limit) => {
    expect(validateFor(envelope, limit, 2, CHECKPOINT)).toEqual(failure('InvalidRetryLimit'));
  });
});

describe('reserveInEnvelope', () => {
  it('starts a new key at ordinal 1 and adopts the checkpoint', () => {
    const next = value(reserveInEnvelope(EMPTY_ENVELOPE, entry(5), 4, CHECKPOINT));
    expect(next.checkpoint).toBe(CHECKPOINT);
    expect(next.entries).toEqual([entry(5)]);
    expect(EMPTY_ENVELOPE.entries).toHaveLength(0);
  });

  it('accepts exactly the stored ordinal plus one and replaces the entry', () => {
    const stored = envelopeOf([entry(1, { ordinal: 2 }), entry(2)]);
    const next = value(reserveInEnvelope(stored, entry(1, { ordinal: 3, phase: 'read' }), 2, CHECKPOINT));
    expect(next.entries).toEqual([entry(1, { ordinal: 3, phase: 'read' }), entry(2)]);
    expect(reservedOrdinal(stored, key(1))).toBe(2);
    expect(reservedOrdinal(next, key(1))).toBe(3);
  });

  it.each([0, 2])('refuses ordinal %s for a new key as StaleReservation', (ordinal) => {
    expect(reserveInEnvelope(EMPTY_ENVELOPE, entry(1, { ordinal }), 4, CHECKPOINT)).toEqual(
      failure('StaleReservation'),
    );
  });

  it.each([2, 4])('refuses ordinal %s after stored ordinal 2 (only 3 follows)', (ordinal) => {
    const stored = envelopeOf([entry(1, { ordinal: 2 })]);
    expect(reserveInEnvelope(stored, entry(1, { ordinal }), 4, CHECKPOINT)).toEqual(failure('StaleReservation'));
  });

  it('refuses to go past ordinal 65535', () => {
    const stored = envelopeOf([entry(1, { ordinal: 65_535 })]);
    expect(reserveInEnvelope(stored, entry(1, { ordinal: 65_536 }), 4, CHECKPOINT)).toEqual(
      failure('StaleReservation'),
    );
  });

  it('refuses a new key once the envelope holds the state limit, counting every entry', () => {
    const full = envelopeOf([entry(1), entry(2)]);
    expect(reserveInEnvelope(full, entry(3), 2, CHECKPOINT)).toEqual(failure('CapacityExhausted', { max: 2 }));
    expect(value(reserveInEnvelope(full, entry(2, { ordinal: 2 }), 2, CHECKPOINT)).entries).toHaveLength(2);
  });

  it('reports a stale ordinal before capacity', () => {
    const full = envelopeOf([entry(1)]);
    expect(reserveInEnvelope(full, entry(3, { ordinal: 2 }), 1, CHECKPOINT)).toEqual(failure('StaleReservation'));
  });

  it('reports entries of another checkpoint as corrupt, before the ordinal check', () => {
    const stored = envelopeOf([entry(1)]);
    expect(reserveInEnvelope(stored, entry(1, { ordinal: 9 }), 4, OTHER_CHECKPOINT)).toEqual(
      corrupt('CheckpointMismatch'),
    );
  });

  it('refuses to retain a key under the zero checkpoint', () => {
    expect(reserveInEnvelope(EMPTY_ENVELOPE, entry(1), 4, ZERO)).toEqual(corrupt('CheckpointMismatch'));
  });

  it('refuses a reservation that would not decode', () => {
    expect(reserveInEnvelope(EMPTY_ENVELOPE, entry(1, { revision: ' x' }), 4, CHECKPOINT)).toEqual(
      corrupt('MalformedEntry'),
    );
    expect(reserveInEnvelope(EMPTY_ENVELOPE, entry(1, { phase: 'x' as never }), 4, CHECKPOINT)).toEqual(
      corrupt('UnknownEnumeration'),
    );
  });

  it('refuses an envelope the store could not write (over 64 KiB)', () => {
    // Each entry with a 128-quote revision takes 394 bytes: 166 of them fit in 64 KiB, 167 do not.
    const wide = '"'.repeat(128);
    const stored = envelopeOf(Array.from({ length: 166 }, (_, i) => entry(i + 1, { revision: wide })));
    expect(value(toCanonicalJson(stored)).byteLength).toBeLessThanOrEqual(65_536);
    expect(reserveInEnvelope(stored, entry(999), 256, CHECKPOINT)).toEqual(corrupt('TooLarge'));
    expect(reserveInEnvelope(stored, entry(1, { ordinal: 2, revision: wide }), 256, CHECKPOINT).ok).toBe(true);
  });

  it('refuses an invalid state limit', () => {
    expect(reserveInEnvelope(EMPTY_ENVELOPE, entry(1), 0, CHECKPOINT)).toEqual(failure('InvalidRetryStateLimit'));
  });
});

describe('resolution', () => {
  const stored = envelopeOf([entry(1), entry(2), entry(3)]);

  it('counts entries not in the resolved set', () => {
    expect(unresolvedCount(stored, [])).toBe(3);
    expect(unresolvedCount(stored, new Set([key(1), key(3), key(99)]))).toBe(1);
    expect(unresolvedCount(EMPTY_ENVELOPE, [key(1)])).toBe(0);
  });

  it('clears to the empty envelope when every key is resolved', () => {
    const cleared = value(clearResolvedFromEnvelope(stored, [key(3), key(1), key(2)]));
    expect(cleared).toEqual(EMPTY_ENVELOPE);
    expect(value(checksumHex(cleared))).toBe(EMPTY_CHECKSUM_HEX);
    expect(value(clearResolvedFromEnvelope(EMPTY_ENVELOPE, []))).toEqual(EMPTY_ENVELOPE);
  });

  it('refuses to clear while a key is unresolved: it would outlive its checkpoint', () => {
    expect(clearResolvedFromEnvelope(stored, new Set([key(1), key(2)]))).toEqual(corrupt('CheckpointMismatch'));
    expect(stored.entries).toHaveLength(3);
  });
});

describe('retryCounterFor', () => {
  it('bumps a counter only for read, process and write', () => {
    expect(retryCounterFor('read')).toBe('read');
    expect(retryCounterFor('process')).toBe('process');
    expect(retryCounterFor('write')).toBe('write');
    for (const phase of ['transaction', 'checkpoint', 'listener', 'backoff'] as const) {
      expect(retryCounterFor(phase)).toBeNull();
    }
  });
});
