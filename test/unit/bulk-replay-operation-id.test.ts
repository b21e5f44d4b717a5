import { describe, expect, it } from 'vitest';
import { OPERATION_ID_PATTERN } from '@/lib/domain/identifier-patterns';
import { bulkReplayOperationId } from '@/lib/services/settlement-operation-id';

describe('bulk replay item operation ids', () => {
  it('is <job>:<receipt> whenever that is a valid operation id', () => {
    expect(bulkReplayOperationId(42, 'rcpt_0a1b2c3d4e5f60718293')).toBe('42:rcpt_0a1b2c3d4e5f60718293');
    const longest = 'r'.repeat(61);
    expect(bulkReplayOperationId(42, longest)).toBe(`42:${longest}`);
  });

  it('replaces a receipt that would break the bound or the character set by its digest, within 64 characters', () => {
    const cases = ['r'.repeat(62), 'receipt with spaces', 'reçu-é', 'a/b', 'x'.repeat(10_000)];
    const ids = cases.map((receipt) => bulkReplayOperationId(9_007_199_254_740_991, receipt));
    for (const id of ids) {
      expect(id).toMatch(OPERATION_ID_PATTERN);
      expect(id.length).toBe(64);
      expect(id.startsWith('9007199254740991:sha256.')).toBe(true);
    }
    expect(new Set(ids).size).toBe(cases.length);
    expect(bulkReplayOperationId(1, 'a/b')).toBe(bulkReplayOperationId(1, 'a/b'));
    expect(bulkReplayOperationId(1, 'a/b')).not.toBe(bulkReplayOperationId(2, 'a/b'));
  });

  it('never lets a literal receipt pose as another receipt digest', () => {
    const hashed = bulkReplayOperationId(7, 'a/b');
    const literal = hashed.slice('7:'.length);
    expect(bulkReplayOperationId(7, literal)).not.toBe(hashed);
    expect(bulkReplayOperationId(7, literal)).toMatch(/^7:sha256\.[0-9a-f]+$/);
  });
});
