/** Gives back a slot; calling it again does nothing. */
export type ReleaseSlot = () => void;

export interface SlotLimiter {
  /** A slot for `owner`, or null when the owner or the whole process is at its limit. */
  tryAcquire(owner: string): ReleaseSlot | null;
  inUse(): number;
}

/**
 * Bounded concurrent slots, per owner and overall. A refusal is immediate: a caller
 * beyond the bound is told to come back later rather than queued behind a slow one.
 */
export function createSlotLimiter(limits: { total: number; perOwner: number }): SlotLimiter {
  let used = 0;
  const byOwner = new Map<string, number>();
  return {
    tryAcquire(owner) {
      const mine = byOwner.get(owner) ?? 0;
      if (used >= limits.total || mine >= limits.perOwner) return null;
      used += 1;
      byOwner.set(owner, mine + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        used -= 1;
        const left = (byOwner.get(owner) ?? 1) - 1;
        if (left > 0) byOwner.set(owner, left);
        else byOwner.delete(owner);
      };
    },
    inUse: () => used,
  };
}
