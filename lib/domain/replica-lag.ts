/**
 * How far a streaming replica is behind its primary, measured against the primary's
 * own write positions rather than against what the replica happens to have received:
 * a replica cut off from its primary has replayed all it received, yet falls further
 * behind with every write the primary makes.
 */
export interface PrimarySample {
  /** When the primary was at `lsn`, on the measuring process's clock (ms). */
  atMs: number;
  lsn: bigint;
}

/**
 * 0 when the replica has replayed the primary's latest sampled position; otherwise the
 * time since the primary first wrote past what the replica has replayed (the earliest
 * sample ahead of it). `samples` are oldest first.
 */
export function replicaLagMs(samples: readonly PrimarySample[], replayLsn: bigint, nowMs: number): number {
  const latest = samples.at(-1);
  if (!latest || replayLsn >= latest.lsn) return 0;
  const firstAhead = samples.find((sample) => sample.lsn > replayLsn) ?? latest;
  return Math.max(0, nowMs - firstAhead.atMs);
}

/**
 * The samples still needed to tell a lag of up to `keepMs`: those within it, and the
 * newest one older than it (so a replica stuck behind every kept sample still reads as
 * at least `keepMs` behind).
 */
export function keptSamples(samples: readonly PrimarySample[], nowMs: number, keepMs: number): PrimarySample[] {
  const firstRecent = samples.findIndex((sample) => nowMs - sample.atMs <= keepMs);
  if (firstRecent === -1) return samples.slice(-1);
  return samples.slice(Math.max(0, firstRecent - 1));
}
