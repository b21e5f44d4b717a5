import { describe, expect, it } from 'vitest';
import { toErrorCode } from '@/lib/domain/error-code';

describe('toErrorCode', () => {
  it.each([
    ['NotStale', 'NOT_STALE'],
    ['StaleLease', 'STALE_LEASE'],
    ['ClockEvidenceUnusable', 'CLOCK_EVIDENCE_UNUSABLE'],
    ['UnsupportedSchemaVersion', 'UNSUPPORTED_SCHEMA_VERSION'],
    ['OwnedByCurrentProcess', 'OWNED_BY_CURRENT_PROCESS'],
    ['Corrupt', 'CORRUPT'],
    ['TooLarge', 'TOO_LARGE'],
    ['HTTPTimeout', 'HTTP_TIMEOUT'],
    ['Utf8Bytes', 'UTF8_BYTES'],
  ])('maps %s to %s', (kind, code) => {
    expect(toErrorCode(kind)).toBe(code);
  });

  it('leaves a code that is already SCREAMING_SNAKE unchanged', () => {
    expect(toErrorCode('FOUR_EYES_REQUIRED')).toBe('FOUR_EYES_REQUIRED');
  });
});
