import 'server-only';
import { performance } from 'node:perf_hooks';
import type { ProposerClock } from '../ports/proposer-clock';

/** This process's clocks. Keep one per process: it remembers the latest server time seen. */
export function systemProposerClock(): ProposerClock {
  let lastServerTimeMs: number | null = null;
  return {
    wallMs: () => Date.now(),
    monotonicMs: () => performance.now(),
    lastServerTimeMs: () => lastServerTimeMs,
    observeServerTime(serverTimeMs) {
      // Only ever forward: a snapshot older than one already seen must not lower the bar.
      if (lastServerTimeMs === null || serverTimeMs > lastServerTimeMs) lastServerTimeMs = serverTimeMs;
    },
  };
}
