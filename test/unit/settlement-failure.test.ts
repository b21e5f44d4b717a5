import { describe, expect, it } from 'vitest';
import { readDeadLetterRecord } from '@/lib/domain/dead-letter-record';
import {
  EMPTY_DETAIL_SHA256_HEX,
  FAILURE_CODE_WORDS,
  bytesToHex,
  deadLetterSentence,
  deadLetterSummary,
  detailCellText,
  detailWords,
  failureCodeWords,
  failureRetryWords,
  retrySentence,
} from '@/lib/domain/settlement-failure';
import { deadLetterCanonicalJson, failureDetailSha256Hex, FAILURE_CODES } from '@/lib/domain/settlement';

const DETAIL = failureDetailSha256Hex('ledger rpc: connection reset');
const row = { receiptId: 'rcpt_0a1b', finalizedAt: 1_700_000_000_000, attempts: 3, reason: 'rpc' };

function stored(overrides: Partial<Parameters<typeof deadLetterCanonicalJson>[0]> = {}): string {
  const json = deadLetterCanonicalJson({
    receiptId: row.receiptId,
    finalizedAt: row.finalizedAt,
    attempts: row.attempts,
    reasonCode: 'rpc',
    detailSha256Hex: DETAIL,
    ...overrides,
  });
  if (!json.ok) throw new Error(json.error.detail);
  return json.value;
}

describe('a settlement failure in words', () => {
  it('has words for every failure code, and names an unknown one as unknown', () => {
    expect(Object.keys(FAILURE_CODE_WORDS).sort()).toEqual([...FAILURE_CODES].sort());
    for (const code of FAILURE_CODES) expect(failureCodeWords(code)).toMatch(/^[a-z]/);
    expect(failureCodeWords('quantum_flux')).toBe('a reason code Keel does not know');
  });

  it('says whether another try can succeed, from the retryable codes', () => {
    expect(failureRetryWords('rpc')).toMatch(/can succeed on another try/);
    expect(failureRetryWords('backend')).toMatch(/can succeed on another try/);
    expect(failureRetryWords('signature')).toMatch(/repeats the failure/);
    expect(failureRetryWords('quantum_flux')).toMatch(/not known/);
  });

  it('makes a sentence of the reason code and attempts, and a short line for a list', () => {
    expect(deadLetterSentence({ reason: 'rpc', attempts: 3 })).toBe(
      'Dead-lettered after 3 attempts: a remote call failed (rpc).',
    );
    expect(deadLetterSentence({ reason: 'invalid_input', attempts: 1 })).toBe(
      'Dead-lettered after 1 attempt: the settlement’s input was invalid (invalid_input).',
    );
    expect(retrySentence({ reasonCode: 'backend', attempts: 1 })).toBe(
      'Failed once so far: the storage backend failed (backend).',
    );
    expect(retrySentence({ reasonCode: 'rpc', attempts: 4 })).toMatch(/^Failed 4 times so far/);
    expect(deadLetterSummary({ reason: 'rpc', detailSha256Hex: DETAIL })).toBe(
      `A remote call failed; detail SHA-256 ${DETAIL}.`,
    );
    expect(deadLetterSummary({ reason: 'backend', detailSha256Hex: EMPTY_DETAIL_SHA256_HEX })).toBe(
      'The storage backend failed; no detail given.',
    );
    expect(detailCellText(DETAIL)).toBe(`${DETAIL.slice(0, 12)}…`);
    expect(detailCellText(EMPTY_DETAIL_SHA256_HEX)).toBe('none given');
    expect(detailCellText(null)).toBe('unreadable');
  });

  it('says an empty detail is empty, and an unreadable digest is unreadable', () => {
    expect(EMPTY_DETAIL_SHA256_HEX).toBe(failureDetailSha256Hex(''));
    expect(detailWords(EMPTY_DETAIL_SHA256_HEX)).toBe('no detail given');
    expect(detailWords(null)).toBe('detail digest unreadable');
  });

  it('writes bytes as lowercase hex and refuses what is not a byte', () => {
    expect(bytesToHex([0, 15, 16, 255])).toBe('000f10ff');
    expect(bytesToHex([])).toBe('');
    expect(bytesToHex([256])).toBeNull();
    expect(bytesToHex([-1])).toBeNull();
    expect(bytesToHex([1.5])).toBeNull();
    expect(bytesToHex(['ff'])).toBeNull();
  });
});

describe('a stored dead letter read for people', () => {
  it('turns the JSON byte array of the detail digest back into the hex it was written from', () => {
    const json = stored();
    expect(json).toContain('"detail_sha256":[');
    expect(readDeadLetterRecord(json, row)).toEqual({
      ok: true,
      schema: 'chio.settle.dead-letter.v2',
      detailSha256Hex: DETAIL,
      disagreements: [],
    });
  });

  it('names each field that disagrees with the row', () => {
    const reading = readDeadLetterRecord(stored({ attempts: 4, reasonCode: 'backend' }), row);
    expect(reading).toMatchObject({
      ok: true,
      disagreements: [
        'attempts is 4 in the JSON, 3 in the row',
        'reason.code is "backend" in the JSON, rpc in the row',
      ],
    });
  });

  it('says why a JSON it cannot read is unreadable, never throwing', () => {
    expect(readDeadLetterRecord('{', row)).toEqual({ ok: false, problem: 'the stored record is not JSON' });
    expect(readDeadLetterRecord('[]', row)).toEqual({ ok: false, problem: 'the stored record is not a JSON object' });
    expect(readDeadLetterRecord('{}', row)).toEqual({ ok: false, problem: 'the stored record has no reason' });
    const short = JSON.stringify({ reason: { code: 'rpc', detail_sha256: [1, 2, 3] } });
    expect(readDeadLetterRecord(short, row)).toMatchObject({
      ok: false,
      problem: expect.stringMatching(/not 32 bytes/),
    });
    const hex = JSON.stringify({ reason: { code: 'rpc', detail_sha256: DETAIL } });
    expect(readDeadLetterRecord(hex, row)).toMatchObject({ ok: false });
  });
});
