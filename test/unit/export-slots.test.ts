import { describe, expect, it } from 'vitest';
import { createSlotLimiter } from '../../lib/server/export-slots';

describe('export slots', () => {
  it('admits at most perOwner for one owner and total in all, refusing at once beyond', () => {
    const slots = createSlotLimiter({ total: 4, perOwner: 2 });
    const a1 = slots.tryAcquire('a');
    const a2 = slots.tryAcquire('a');
    expect(a1).not.toBeNull();
    expect(a2).not.toBeNull();
    expect(slots.tryAcquire('a')).toBeNull();
    expect(slots.tryAcquire('b')).not.toBeNull();
    expect(slots.tryAcquire('c')).not.toBeNull();
    expect(slots.tryAcquire('d')).toBeNull();
    expect(slots.inUse()).toBe(4);
    a1!();
    expect(slots.tryAcquire('d')).not.toBeNull();
  });

  it('gives a slot back once, however often release is called', () => {
    const slots = createSlotLimiter({ total: 2, perOwner: 2 });
    const release = slots.tryAcquire('a')!;
    slots.tryAcquire('b');
    release();
    release();
    expect(slots.inUse()).toBe(1);
    expect(slots.tryAcquire('c')).not.toBeNull();
    expect(slots.tryAcquire('e')).toBeNull();
  });
});
