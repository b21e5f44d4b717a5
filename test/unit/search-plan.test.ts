import { describe, expect, it } from 'vitest';
import { searchPlan } from '../../lib/domain/search';
import { searchHitHref, singleDestination, type SearchHit, type SearchResults } from '../../lib/queries/search-types';

describe('searchPlan', () => {
  it('reads digits as an id, within a bigint and a safe JavaScript number', () => {
    expect(searchPlan('42', 'viewer').numericId).toBe(42);
    expect(searchPlan('0042', 'viewer').numericId).toBe(42);
    expect(searchPlan('9007199254740991', 'viewer').numericId).toBe(9_007_199_254_740_991);
    expect(searchPlan('9007199254740992', 'viewer').numericId).toBeNull();
    expect(searchPlan('0', 'viewer').numericId).toBeNull();
    expect(searchPlan('4 2', 'viewer').numericId).toBeNull();
  });

  it('reads 8 to 64 hex digits, either case, as a retry key or digest prefix, in lower case', () => {
    expect(searchPlan('ABCDEF01', 'viewer').hexPrefix).toBe('abcdef01');
    expect(searchPlan('abcdef0', 'viewer').hexPrefix).toBeNull();
    expect(searchPlan('a'.repeat(64), 'viewer').hexPrefix).toBe('a'.repeat(64));
    expect(searchPlan('a'.repeat(65), 'viewer').hexPrefix).toBeNull();
    expect(searchPlan('abcdefg1', 'viewer').hexPrefix).toBeNull();
  });

  it('looks for usernames for a role that may open users only, and operation ids by the runtime rule', () => {
    expect(searchPlan('Approver2', 'admin').username).toBe('approver2');
    for (const role of ['viewer', 'operator', 'approver', 'support'] as const)
      expect(searchPlan('approver2', role).username).toBeNull();
    expect(searchPlan('keel-stop-1', 'viewer').operationId).toBe('keel-stop-1');
    expect(searchPlan('has space', 'viewer').operationId).toBeNull();
    expect(searchPlan('has space', 'viewer').receiptPrefix).toBe('has space');
  });
});

describe('singleDestination', () => {
  const results = (hits: SearchHit[], more = false): SearchResults => ({
    q: 'x',
    groups: [{ kind: hits[0]!.kind, hits, more }],
    notes: [],
  });
  const execution: SearchHit = {
    kind: 'execution',
    executionId: 7,
    instanceId: 7,
    jobName: 'j',
    status: 'FAILED',
    attempt: 1,
  };

  it('opens the one page every hit leads to, and lists otherwise', () => {
    expect(singleDestination(results([execution]))).toBe('/executions/7');
    expect(
      singleDestination({
        q: '7',
        groups: [
          { kind: 'execution', hits: [execution], more: false },
          { kind: 'instance', hits: [{ ...execution, kind: 'instance' }], more: false },
        ],
        notes: [],
      }),
    ).toBe('/executions/7');
    expect(singleDestination(results([execution, { ...execution, executionId: 8 }]))).toBeNull();
    expect(singleDestination(results([execution], true))).toBeNull();
    expect(singleDestination({ q: 'x', groups: [], notes: [] })).toBeNull();
  });

  it('encodes what a hit links to', () => {
    expect(searchHitHref({ kind: 'receipt', receiptId: 'a/b?c', place: 'queued' })).toBe('/settlements/a%2Fb%3Fc');
    expect(
      searchHitHref({
        kind: 'operation',
        source: 'audit',
        operationId: 'o',
        action: 'a',
        targetKind: 'settlement',
        targetId: 'r 1',
        actorLogin: 'x',
        outcome: 'APPLIED',
      }),
    ).toBe('/audit?targetKind=settlement&targetId=r+1');
    expect(
      searchHitHref({
        kind: 'operation',
        source: 'runtime',
        operationId: 'o',
        action: 'LAUNCH',
        executionId: null,
        instanceId: 3,
        outcome: 'REJECTED',
      }),
    ).toBe('/executions?q=3');
  });
});
