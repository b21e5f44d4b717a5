import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  canonicalJsonFromPayload,
  checksumHex,
  EMPTY_CHECKSUM_HEX,
  EMPTY_ENVELOPE,
  FAULT_STATE_FORMAT_ID,
  fromCanonicalJson,
  isClassifierRevision,
  newEnvelope,
  toCanonicalJson,
  type FaultStateEntry,
  type StoredFaultState,
} from '@/lib/domain/fault-state';
import vectors from '../fixtures/vectors.json' with { type: 'json' };
import { CHECKPOINT, entry, envelopeOf, failure, key, value, ZERO } from '../support/fault-state-fixtures';

const sha256 = (bytes: Uint8Array | string): Buffer => createHash('sha256').update(bytes).digest();
const header = { formatId: FAULT_STATE_FORMAT_ID, formatVersion: 1, schemaVersion: 1 };
/** Stored bytes with the checksum of their canonical form, as the runtime writes them. */
const storedBytes = (json: string, checksum: Uint8Array = sha256(json)): StoredFaultState => ({
  ...header,
  bytes: Buffer.from(json, 'utf8'),
  checksum,
});

/** Builds envelope JSON by hand, so tests can write what newEnvelope would refuse. */
const rawJson = (checkpoint: string, entries: unknown[]): string => JSON.stringify({ checkpoint, entries });

describe('canonical form and checksum', () => {
  it.each(vectors.faultStateChecksum)(
    'decodes and re-encodes the shared vector byte for byte',
    ({ canonicalJson, sha256: sum }) => {
      const envelope = value(fromCanonicalJson(storedBytes(canonicalJson, Buffer.from(sum, 'hex'))));
      expect(value(toCanonicalJson(envelope)).toString('utf8')).toBe(canonicalJson);
      expect(value(checksumHex(envelope))).toBe(sum);
      expect(sha256(canonicalJson).toString('hex')).toBe(sum);
    },
  );

  it('gives the empty envelope the zero checkpoint and the published checksum', () => {
    expect(value(toCanonicalJson(EMPTY_ENVELOPE)).toString('utf8')).toBe(vectors.faultStateChecksum[0]?.canonicalJson);
    expect(value(checksumHex(EMPTY_ENVELOPE))).toBe(EMPTY_CHECKSUM_HEX);
    expect(EMPTY_CHECKSUM_HEX).toBe('a491114819e0d3bd8b7ca004dc0636f95b45e2fcb1a67ddb5726beaea12f9922');
  });

  it('writes entry keys in the order category, key, ordinal, phase, revision and entries by key', () => {
    const envelope = envelopeOf([entry(2, { phase: 'read', category: 'USER_COMPONENT', ordinal: 3 }), entry(1)]);
    expect(value(toCanonicalJson(envelope)).toString('utf8')).toBe(
      `{"checkpoint":"${CHECKPOINT}","entries":[` +
        `{"category":"TIMEOUT","key":"${key(1)}","ordinal":1,"phase":"write","revision":"import_v1"},` +
        `{"category":"USER_COMPONENT","key":"${key(2)}","ordinal":3,"phase":"read","revision":"import_v1"}]}`,
    );
  });

  it('escapes a revision as the runtime does and keeps non-ASCII as raw UTF-8', () => {
    const envelope = envelopeOf([entry(1, { revision: 'v"1\\é' })]);
    const text = value(toCanonicalJson(envelope)).toString('utf8');
    expect(text).toContain('"revision":"v\\"1\\\\é"');
  });

  it('refuses to encode more than 64 KiB', () => {
    const wide = '"'.repeat(128); // 128 bytes, written as 256 once escaped
    const envelope = envelopeOf(Array.from({ length: 256 }, (_, i) => entry(i + 1, { revision: wide })));
    expect(toCanonicalJson(envelope)).toEqual(failure('TooLarge', { maxBytes: 65536 }));
    expect(checksumHex(envelope)).toEqual(failure('TooLarge', { maxBytes: 65536 }));
  });
});

describe('newEnvelope', () => {
  it('sorts entries by key', () => {
    const envelope = envelopeOf([entry(3), entry(1), entry(2)]);
    expect(envelope.entries.map((e) => e.key)).toEqual([key(1), key(2), key(3)]);
    expect(envelope.checkpoint).toBe(CHECKPOINT);
  });

  it('accepts the empty envelope only with the zero checkpoint', () => {
    expect(value(newEnvelope(ZERO, []))).toEqual(EMPTY_ENVELOPE);
    expect(newEnvelope(CHECKPOINT, [])).toEqual(failure('CheckpointMismatch'));
  });

  it('refuses entries with the zero checkpoint', () => {
    expect(newEnvelope(ZERO, [entry(1)])).toEqual(failure('CheckpointMismatch'));
  });

  it('refuses a repeated key before looking at the checkpoint', () => {
    expect(newEnvelope(CHECKPOINT, [entry(1), entry(1, { ordinal: 2 })])).toEqual(failure('DuplicateKey'));
    expect(newEnvelope(ZERO, [entry(1), entry(1)])).toEqual(failure('DuplicateKey'));
  });

  it('refuses more than 256 entries before anything else', () => {
    expect(
      newEnvelope(
        CHECKPOINT,
        Array.from({ length: 256 }, (_, i) => entry(i + 1)),
      ).ok,
    ).toBe(true);
    const tooMany = Array.from({ length: 257 }, () => entry(1));
    expect(newEnvelope(ZERO, tooMany)).toEqual(failure('TooManyEntries', { max: 256 }));
  });

  it('validates entries it was handed', () => {
    expect(newEnvelope(CHECKPOINT, [entry(1, { ordinal: 65536 })])).toEqual(failure('MalformedEntry'));
    expect(newEnvelope(CHECKPOINT, [entry(1, { phase: 'WRITE' as never })])).toEqual(failure('UnknownEnumeration'));
    expect(newEnvelope('22', [entry(1)])).toEqual(failure('Malformed'));
  });
});

describe('fromCanonicalJson: the order of checks', () => {
  const valid = value(toCanonicalJson(envelopeOf([entry(1)]))).toString('utf8');

  it('reports UnsupportedFormat for the format id or version before anything else', () => {
    const broken = { ...storedBytes('x'.repeat(70_000)), schemaVersion: 2 };
    expect(fromCanonicalJson({ ...broken, formatId: 'oxide-batch.other' })).toEqual(failure('UnsupportedFormat'));
    expect(fromCanonicalJson({ ...broken, formatVersion: 2 })).toEqual(failure('UnsupportedFormat'));
  });

  it('reports UnsupportedSchemaVersion before the size', () => {
    expect(fromCanonicalJson({ ...storedBytes('x'.repeat(70_000)), schemaVersion: 2 })).toEqual(
      failure('UnsupportedSchemaVersion'),
    );
  });

  it('reports TooLarge for a payload that is also malformed', () => {
    expect(fromCanonicalJson(storedBytes('{'.repeat(65_537)))).toEqual(failure('TooLarge', { maxBytes: 65536 }));
    expect(fromCanonicalJson({ ...header, bytes: '{'.repeat(65_537), checksum: new Uint8Array(32) })).toEqual(
      failure('TooLarge', { maxBytes: 65536 }),
    );
  });

  it('measures the stored bytes: 64 KiB exactly is accepted, one more byte is not', () => {
    const sum = sha256(valid);
    const padded = (size: number) => valid + ' '.repeat(size - Buffer.byteLength(valid));
    expect(fromCanonicalJson(storedBytes(padded(65_536), sum)).ok).toBe(true);
    expect(fromCanonicalJson(storedBytes(padded(65_537), sum))).toEqual(failure('TooLarge', { maxBytes: 65536 }));
  });

  it.each([
    ['not JSON', '{"checkpoint":'],
    ['an array', '[]'],
    ['null', 'null'],
    ['missing checkpoint', '{"entries":[]}'],
    ['an uppercase checkpoint', rawJson('AB'.repeat(32), [])],
    ['a short checkpoint', rawJson('00', [])],
    ['entries not an array', `{"checkpoint":"${ZERO}","entries":{}}`],
    ['a byte-order mark', `\ufeff${rawJson(ZERO, [])}`],
  ])('reports Malformed for %s', (_case, json) => {
    expect(fromCanonicalJson(storedBytes(json))).toEqual(failure('Malformed'));
  });

  it('reports Malformed for bytes that are not UTF-8', () => {
    const bytes = Buffer.concat([Buffer.from('{"checkpoint":"'), Buffer.from([0xff]), Buffer.from('"}')]);
    expect(fromCanonicalJson({ ...header, bytes, checksum: sha256(bytes) })).toEqual(failure('Malformed'));
  });

  it('reports TooManyEntries before looking at any entry', () => {
    const json = rawJson(
      CHECKPOINT,
      Array.from({ length: 257 }, () => null),
    );
    expect(fromCanonicalJson(storedBytes(json))).toEqual(failure('TooManyEntries', { max: 256 }));
  });

  it.each<[string, unknown]>([
    ['a non-object entry', 'entry'],
    ['an array entry', []],
    ['a missing key', { ...entry(1), key: undefined }],
    ['an uppercase key', entry(1, { key: 'AB'.repeat(32) })],
    ['a key and a phase both wrong', entry(1, { key: 'x', phase: 'nope' as never })],
    ['a negative ordinal', entry(1, { ordinal: -1 })],
    ['a fractional ordinal', entry(1, { ordinal: 1.5 })],
    ['an ordinal above 65535', entry(1, { ordinal: 65_536 })],
    ['an ordinal as text', { ...entry(1), ordinal: '1' }],
    ['an empty revision', entry(1, { revision: '' })],
    ['a revision over 128 bytes', entry(1, { revision: 'é'.repeat(65) })],
    ['a revision with a control character', entry(1, { revision: 'a\u0007b' })],
    ['a revision with outer whitespace', entry(1, { revision: ' import_v1' })],
  ])('reports MalformedEntry for %s', (_case, bad) => {
    expect(fromCanonicalJson(storedBytes(rawJson(CHECKPOINT, [bad])))).toEqual(failure('MalformedEntry'));
  });

  it.each<[string, unknown]>([
    ['an unknown phase', entry(1, { phase: 'commit' as never })],
    ['a missing phase', { ...entry(1), phase: undefined }],
    ['an unknown category', entry(1, { category: 'timeout' as never })],
    ['an unknown phase and a bad ordinal', entry(1, { phase: 'x' as never, ordinal: -1 })],
  ])('reports UnknownEnumeration for %s', (_case, bad) => {
    expect(fromCanonicalJson(storedBytes(rawJson(CHECKPOINT, [bad])))).toEqual(failure('UnknownEnumeration'));
  });

  it('reports the first bad entry in stored order', () => {
    const json = rawJson(CHECKPOINT, [entry(1, { category: 'NOPE' as never }), entry(2, { ordinal: -1 })]);
    expect(fromCanonicalJson(storedBytes(json))).toEqual(failure('UnknownEnumeration'));
  });

  it('checks entries before their order', () => {
    const json = rawJson(CHECKPOINT, [entry(2), entry(1, { ordinal: -1 })]);
    expect(fromCanonicalJson(storedBytes(json))).toEqual(failure('MalformedEntry'));
  });

  it('reports UnsortedEntries for descending keys and for a repeated key', () => {
    expect(fromCanonicalJson(storedBytes(rawJson(CHECKPOINT, [entry(2), entry(1)])))).toEqual(
      failure('UnsortedEntries'),
    );
    expect(fromCanonicalJson(storedBytes(rawJson(CHECKPOINT, [entry(1), entry(1)])))).toEqual(
      failure('UnsortedEntries'),
    );
  });

  it('reports UnsortedEntries before CheckpointMismatch', () => {
    expect(fromCanonicalJson(storedBytes(rawJson(ZERO, [entry(2), entry(1)])))).toEqual(failure('UnsortedEntries'));
  });

  it('reports CheckpointMismatch in both directions, before the checksum', () => {
    const wrongSum = new Uint8Array(32);
    expect(fromCanonicalJson(storedBytes(rawJson(ZERO, [entry(1)]), wrongSum))).toEqual(failure('CheckpointMismatch'));
    expect(fromCanonicalJson(storedBytes(rawJson(CHECKPOINT, []), wrongSum))).toEqual(failure('CheckpointMismatch'));
  });

  it('reports ChecksumMismatch last', () => {
    expect(fromCanonicalJson(storedBytes(valid, sha256(`${valid} `)))).toEqual(failure('ChecksumMismatch'));
    expect(fromCanonicalJson(storedBytes(valid, sha256(valid).subarray(0, 31)))).toEqual(failure('ChecksumMismatch'));
  });

  it('checks the checksum against the canonical bytes, not the stored spelling', () => {
    const first = JSON.stringify({
      revision: 'import_v1',
      phase: 'write',
      ordinal: 1,
      key: key(1),
      category: 'TIMEOUT',
    });
    const spelled = `{ "entries": [ ${first} ], "checkpoint": "${CHECKPOINT}" }`;
    const envelope = value(fromCanonicalJson(storedBytes(spelled, sha256(valid))));
    expect(envelope).toEqual(envelopeOf([entry(1)]));
    expect(fromCanonicalJson(storedBytes(spelled))).toEqual(failure('ChecksumMismatch'));
  });

  it('ignores fields it does not know, as the runtime does', () => {
    const json = JSON.stringify({ checkpoint: CHECKPOINT, entries: [{ ...entry(1), note: 'x' }], extra: true });
    expect(value(fromCanonicalJson(storedBytes(json, sha256(valid))))).toEqual(envelopeOf([entry(1)]));
  });
});

describe('fromCanonicalJson with a parsed jsonb payload', () => {
  const stored = (payload: unknown, checksum: Uint8Array): StoredFaultState => ({ ...header, payload, checksum });
  // Postgres jsonb returns object keys shortest first, not in canonical order.
  const jsonbOrder = (e: FaultStateEntry) => ({
    key: e.key,
    phase: e.phase,
    ordinal: e.ordinal,
    category: e.category,
    revision: e.revision,
  });

  it.each(vectors.faultStateChecksum)(
    'rebuilds the canonical bytes of the shared vector',
    ({ canonicalJson, sha256: sum }) => {
      const parsed = JSON.parse(canonicalJson) as { checkpoint: string; entries: FaultStateEntry[] };
      const payload = { entries: parsed.entries.map(jsonbOrder), checkpoint: parsed.checkpoint };
      expect(value(canonicalJsonFromPayload(payload)).toString('utf8')).toBe(canonicalJson);
      expect(value(fromCanonicalJson(stored(payload, Buffer.from(sum, 'hex'))))).toEqual(
        value(fromCanonicalJson(storedBytes(canonicalJson))),
      );
    },
  );

  it('applies the same order of checks', () => {
    const sum = new Uint8Array(32);
    const huge = { junk: 'x'.repeat(70_000) };
    expect(fromCanonicalJson({ ...stored(huge, sum), formatVersion: 3 })).toEqual(failure('UnsupportedFormat'));
    expect(fromCanonicalJson({ ...stored(huge, sum), schemaVersion: 3 })).toEqual(failure('UnsupportedSchemaVersion'));
    expect(fromCanonicalJson(stored(huge, sum))).toEqual(failure('TooLarge', { maxBytes: 65536 }));
    expect(fromCanonicalJson(stored([], sum))).toEqual(failure('Malformed'));
    const tooMany = { checkpoint: CHECKPOINT, entries: Array.from({ length: 257 }, () => ({})) };
    expect(fromCanonicalJson(stored(tooMany, sum))).toEqual(failure('TooManyEntries', { max: 256 }));
    expect(fromCanonicalJson(stored({ checkpoint: CHECKPOINT, entries: [{}] }, sum))).toEqual(
      failure('MalformedEntry'),
    );
    const unknown = { checkpoint: CHECKPOINT, entries: [entry(1, { phase: 'x' as never })] };
    expect(fromCanonicalJson(stored(unknown, sum))).toEqual(failure('UnknownEnumeration'));
    const repeated = { checkpoint: ZERO, entries: [entry(1), entry(1)] };
    expect(fromCanonicalJson(stored(repeated, sum))).toEqual(failure('UnsortedEntries'));
    expect(fromCanonicalJson(stored({ checkpoint: ZERO, entries: [entry(1)] }, sum))).toEqual(
      failure('CheckpointMismatch'),
    );
    expect(fromCanonicalJson(stored({ checkpoint: ZERO, entries: [] }, sum))).toEqual(failure('ChecksumMismatch'));
    expect(
      value(fromCanonicalJson(stored({ checkpoint: ZERO, entries: [] }, Buffer.from(EMPTY_CHECKSUM_HEX, 'hex')))),
    ).toEqual(EMPTY_ENVELOPE);
  });

  it('reports Malformed for values JSON cannot represent', () => {
    expect(canonicalJsonFromPayload(undefined)).toEqual(failure('Malformed'));
    expect(canonicalJsonFromPayload({ checkpoint: ZERO, entries: [], n: 1n })).toEqual(failure('Malformed'));
    expect(canonicalJsonFromPayload('{"checkpoint":"x"}')).toEqual(failure('Malformed'));
  });
});

describe('isClassifierRevision', () => {
  it.each([
    ['import_v1', true],
    ['with inner space', true],
    ['x'.repeat(128), true],
    ['é'.repeat(64), true],
    ['x'.repeat(129), false],
    ['é'.repeat(65), false],
    ['', false],
    ['trailing\t', false],
    ['\u00a0nbsp', false],
    ['del\u007f', false],
    ['c1\u0085', false],
    ['lone\ud800', false],
  ])('%j -> %s', (revision, valid) => {
    expect(isClassifierRevision(revision)).toBe(valid);
  });
});
