/**
 * The local clocks the proposer rules judge a snapshot against (docs/design.md#proposer-rules).
 * Staleness is measured on the database's clock; these only decide whether that
 * measurement can be trusted.
 */
export interface ProposerClock {
  /** This process's wall clock, epoch ms. */
  wallMs(): number;
  /** A monotonic reading in ms, for the duration of a snapshot read. */
  monotonicMs(): number;
  /** The latest server time this process has seen in a snapshot, or null. */
  lastServerTimeMs(): number | null;
  observeServerTime(serverTimeMs: number): void;
}
