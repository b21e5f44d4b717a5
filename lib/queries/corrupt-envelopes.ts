import 'server-only';
import type { DbOrTx } from '../db/client';
import { type ScannedStep, scanSteps, scannedVerdicts } from './retry-keys';

const SCAN_BATCH = 2_000;

/**
 * How many retained fault-state envelopes fail validation: the Retry keys page's CORRUPT
 * rows, counted over every step. The walk reads each retained step's row version through
 * the envelope index; a payload is read and checksummed only for a row version without a
 * kept verdict, so after the first walk a process reads the payloads of changed steps only.
 */
export async function countCorruptEnvelopes(db: DbOrTx): Promise<number> {
  let corrupt = 0;
  let from: { id: number; inclusive: boolean } | null = null;
  for (;;) {
    const steps: ScannedStep[] = await scanSteps(db, from, {}, SCAN_BATCH);
    const verdicts = await scannedVerdicts(db, steps);
    corrupt += verdicts.filter((verdict) => verdict?.kind === 'corrupt').length;
    const last: ScannedStep | undefined = steps.at(-1);
    if (steps.length < SCAN_BATCH || !last) return corrupt;
    from = { id: Number(last.id), inclusive: false };
  }
}
