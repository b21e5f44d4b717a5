import { describe, expect, it } from 'vitest';
import { keptSamples, replicaLagMs, type PrimarySample } from '../../lib/domain/replica-lag';

const samples = (...pairs: [number, number][]): PrimarySample[] =>
  pairs.map(([atMs, lsn]) => ({ atMs, lsn: BigInt(lsn) }));

describe('replica lag', () => {
  it('is 0 once the replica has replayed the primary’s latest position, however quiet the primary', () => {
    expect(replicaLagMs(samples([0, 100], [1_000, 100], [60_000, 100]), 100n, 61_000)).toBe(0);
    expect(replicaLagMs([], 0n, 5_000)).toBe(0);
  });

  it('grows with every write the primary makes past a replica cut off from it', () => {
    // The replica stopped at 100 (it has replayed all it received); the primary keeps writing.
    const history = samples([0, 100], [1_000, 150], [2_000, 220], [3_000, 300]);
    expect(replicaLagMs(history, 100n, 3_000)).toBe(2_000);
    expect(replicaLagMs(history, 100n, 9_000)).toBe(8_000);
  });

  it('measures from the first position the replica has not reached', () => {
    const history = samples([0, 100], [1_000, 150], [2_000, 220]);
    expect(replicaLagMs(history, 160n, 2_500)).toBe(500);
    expect(replicaLagMs(history, 150n, 2_500)).toBe(500);
    expect(replicaLagMs(history, 149n, 2_500)).toBe(1_500);
  });

  it('keeps enough history to tell a lag past the window', () => {
    const history = samples([0, 100], [1_000, 150], [2_000, 220], [10_000, 300]);
    const kept = keptSamples(history, 10_000, 5_000);
    expect(kept).toEqual(samples([2_000, 220], [10_000, 300]));
    // Stuck behind every kept sample: at least as far behind as the oldest kept one says.
    expect(replicaLagMs(kept, 100n, 10_000)).toBe(8_000);
    expect(keptSamples(samples([0, 1]), 100_000, 5_000)).toEqual(samples([0, 1]));
  });
});
