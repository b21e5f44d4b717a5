import { newEnvelope, type FaultStateEntry, type FaultStateEnvelope } from '@/lib/domain/fault-state';
import type { Result } from '@/lib/domain/result';

/** Fault-state envelopes and entries for the fault-state tests. */

/** The all-zero checkpoint digest: the one an empty envelope carries. */
export const ZERO = '0'.repeat(64);
export const CHECKPOINT = '22'.repeat(32);
export const key = (n: number): string => n.toString(16).padStart(64, '0');
/** Entry `n`: a first TIMEOUT on write under import_v1, with `change` on top. */
export const entry = (n: number, change: Partial<FaultStateEntry> = {}): FaultStateEntry => ({
  key: key(n),
  phase: 'write',
  category: 'TIMEOUT',
  ordinal: 1,
  revision: 'import_v1',
  ...change,
});
/** The value of a result expected to be ok; throws with the error otherwise. */
export const value = <T, E>(result: Result<T, E>): T => {
  if (!result.ok) throw new Error(`unexpected error ${JSON.stringify(result.error)}`);
  return result.value;
};
export const envelopeOf = (entries: FaultStateEntry[], checkpoint = CHECKPOINT): FaultStateEnvelope =>
  value(newEnvelope(checkpoint, entries));
/** The failed result with an error of `kind` (and `extra` fields), as `toEqual` compares it. */
export const failure = (kind: string, extra: object = {}) => ({ ok: false, error: { kind, ...extra } });
