import { describe, expect, it } from 'vitest';
import { CAPPED_COUNT_MEMORY_MS, CappedCountMemory, filterKey } from '../../lib/queries/capped-count-memory';

describe('the memory of counts past their cap', () => {
  it('gives a count back until its moment has passed, then forgets it', () => {
    let now = 1_000;
    const memory = new CappedCountMemory<number>(() => now);
    memory.remember('a', 10_001, memory.mark());
    now += CAPPED_COUNT_MEMORY_MS - 1;
    expect(memory.recall('a')).toBe(10_001);
    now += 1;
    expect(memory.recall('a')).toBeUndefined();
    // Forgotten, not merely hidden: the clock going back would not bring it back.
    now -= 10;
    expect(memory.recall('a')).toBeUndefined();
  });

  it('forgets everything at once, and the oldest first when full', () => {
    const memory = new CappedCountMemory<number>(() => 0);
    for (let i = 0; i < 501; i += 1) memory.remember(`k${i}`, i, memory.mark());
    expect(memory.recall('k0')).toBeUndefined();
    expect(memory.recall('k1')).toBe(1);
    expect(memory.recall('k500')).toBe(500);
    memory.forgetAll();
    expect(memory.recall('k500')).toBeUndefined();
  });

  it('keeps no count begun before the last forgetting, and times a count from its beginning', () => {
    let now = 0;
    const memory = new CappedCountMemory<number>(() => now);
    const before = memory.mark();
    memory.forgetAll();
    memory.remember('a', 10_001, before);
    expect(memory.recall('a')).toBeUndefined();
    const begun = memory.mark();
    now += 500;
    memory.remember('a', 10_001, begun);
    now += CAPPED_COUNT_MEMORY_MS - 500;
    expect(memory.recall('a')).toBeUndefined();
  });

  it('keys a filter by its fields in any order, leaving out those unset and the scope apart', () => {
    const key = filterKey('queue.due', { receiptIdPrefix: 'rcpt_a', minAttempts: 3 });
    expect(filterKey('queue.due', { minAttempts: 3, maxAgeMs: undefined, receiptIdPrefix: 'rcpt_a' })).toBe(key);
    expect(filterKey('queue.retry_scheduled', { receiptIdPrefix: 'rcpt_a', minAttempts: 3 })).not.toBe(key);
    expect(filterKey('queue.due', { receiptIdPrefix: 'rcpt_a', minAttempts: 4 })).not.toBe(key);
    expect(filterKey('queue.due', { receiptIdPrefix: 'rcpt_a' })).not.toBe(key);
  });
});
