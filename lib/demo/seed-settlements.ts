import type { DbOrTx } from '../db/client';
import { settlementEvent } from '../db/schema/keel';
import { settleAttempts, settleDeadLetters } from '../db/schema/settle';
import { grantHeldLeases } from '../db/sql/lease-grants';
import {
  backoffMs,
  deadLetterCanonicalJson,
  DEFAULT_RETRY_POLICY,
  failureDetailSha256Hex,
  type FailureCode,
} from '../domain/settlement';
import { chunks, type SeededRandom } from './random';

type AttemptState = 'due' | 'leased' | 'lease-expired' | 'retry-later' | 'retry-due' | 'retry-leased';

const ATTEMPT_MIX: [AttemptState, number][] = [
  ['due', 1500],
  ['leased', 600],
  ['lease-expired', 200],
  ['retry-later', 1500],
  ['retry-due', 700],
  ['retry-leased', 500],
];
const DEAD_REASON_WEIGHTS: FailureCode[] = [
  'rpc',
  'rpc',
  'rpc',
  'backend',
  'backend',
  'invalid_receipt_signature',
  'invalid_action_hash',
  'malformed_financial_metadata',
  'invalid_observation',
  'invalid_input',
  'untrusted_receipt_signer',
  'signature',
  'verification',
  'serialization',
  'unsupported',
  'invalid_dispatch',
  'invalid_binding',
];
const WORKERS = ['settle-worker-a', 'settle-worker-b', 'settle-worker-c'];

export const receiptIdFor = (random: SeededRandom): string => `rcpt_${random.hex(10)}`;

export interface SettlementSeedSummary {
  attempts: number;
  deadLetters: number;
}

/** The settlement queue in every state, dead letters across reason codes, and their history. */
export async function seedSettlements(
  db: DbOrTx,
  random: SeededRandom,
  nowMs: number,
  attemptCount = 5000,
  deadLetterCount = 300,
): Promise<SettlementSeedSummary> {
  const total = ATTEMPT_MIX.reduce((sum, [, n]) => sum + n, 0);
  const attempts: (typeof settleAttempts.$inferInsert)[] = [];
  const events: (typeof settlementEvent.$inferInsert)[] = [];
  for (const [state, share] of ATTEMPT_MIX) {
    const count = Math.round((share / total) * attemptCount);
    for (let i = 0; i < count; i += 1) {
      const receiptId = receiptIdFor(random);
      const finalizedAt = nowMs - random.int(60_000, 6 * 3_600_000);
      const retry = state.startsWith('retry');
      const tries = retry ? random.int(1, 5) : 0;
      const leased = state === 'leased' || state === 'lease-expired' || state === 'retry-leased';
      const leaseUntil =
        state === 'lease-expired' ? nowMs - random.int(1_000, 600_000) : nowMs + random.int(5_000, 120_000);
      const nextVisible =
        state === 'retry-later'
          ? nowMs + backoffMs(DEFAULT_RETRY_POLICY, tries) + random.int(0, 3_600_000)
          : nowMs - random.int(0, 3_600_000);
      const code: FailureCode | null = retry ? random.pick(['rpc', 'backend'] as const) : null;
      attempts.push({
        receiptId,
        finalizedAt,
        workKind: retry ? 'retry_scheduled' : 'pending_observation',
        attempts: tries,
        nextVisibleAtMs: nextVisible,
        rowVersion: tries * 2 + (leased ? 1 : 0),
        leaseOwner: leased ? random.pick(WORKERS) : null,
        leaseToken: leased ? random.hex(16) : null,
        leaseUntilMs: leased ? leaseUntil : null,
        reasonCode: code,
        reasonDetailSha256: code
          ? Buffer.from(failureDetailSha256Hex(`${code} timeout talking to ledger`), 'hex')
          : null,
        // A leased row's updated_at_ms is its claim's time, as the claim statement writes it.
        updatedAtMs: leased ? Math.min(nowMs, leaseUntil - 30_000) : Math.min(nowMs, finalizedAt + 1_000 * (tries + 1)),
      });
      // Each outcome carries its claim's time; the live (or lapsed) claim is the row's own lease.
      for (let t = 0; t < tries; t += 1) {
        events.push({
          receiptId,
          kind: 'retry_scheduled',
          attempt: t + 1,
          reasonCode: code,
          atMs: finalizedAt + t * 2_000 + 500,
          claimedAtMs: finalizedAt + t * 2_000,
        });
      }
    }
  }

  const deadLetters: (typeof settleDeadLetters.$inferInsert)[] = [];
  for (let i = 0; i < deadLetterCount; i += 1) {
    const receiptId = receiptIdFor(random);
    const reason = random.pick(DEAD_REASON_WEIGHTS);
    const retryable = reason === 'rpc' || reason === 'backend';
    const tries = retryable ? DEFAULT_RETRY_POLICY.maxRetries + 1 : random.int(1, 3);
    const finalizedAt = nowMs - random.int(3_600_000, 5 * 24 * 3_600_000);
    const recordedAt = Math.min(nowMs - 1_000, finalizedAt + random.int(60_000, 24 * 3_600_000));
    const json = deadLetterCanonicalJson({
      receiptId,
      finalizedAt,
      attempts: tries,
      reasonCode: reason,
      detailSha256Hex: failureDetailSha256Hex(`${reason}: demo failure ${i}`),
    });
    if (!json.ok) throw new Error(`demo dead letter: ${json.error.detail}`);
    deadLetters.push({
      receiptId,
      finalizedAt,
      attempts: tries,
      reason,
      canonicalJson: json.value,
      recordedAtMs: recordedAt,
    });
    for (let t = 0; t < tries; t += 1) {
      const lastTry = t === tries - 1;
      const outcomeAt = lastTry ? recordedAt : finalizedAt + t * 5_000 + 500;
      events.push({
        receiptId,
        kind: lastTry ? 'dead_lettered' : 'retry_scheduled',
        attempt: t + 1,
        reasonCode: reason,
        atMs: outcomeAt,
        claimedAtMs: outcomeAt - 500,
      });
    }
  }

  for (const rows of chunks(attempts, 1000)) await db.insert(settleAttempts).values(rows);
  // Leases written straight into the table need their grants, as a claim writes one.
  const leasedIds = attempts.filter((a) => a.leaseOwner != null).map((a) => a.receiptId);
  for (const ids of chunks(leasedIds, 1000)) await db.execute(grantHeldLeases(ids));
  for (const rows of chunks(deadLetters, 1000)) await db.insert(settleDeadLetters).values(rows);
  for (const rows of chunks(events, 2000)) await db.insert(settlementEvent).values(rows);
  return { attempts: attempts.length, deadLetters: deadLetters.length };
}
