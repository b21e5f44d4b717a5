import { createHash } from 'node:crypto';
import type { FailureCategory, FaultPhase } from '../domain/batch-status';
import { checksum, newEnvelope, type FaultStateEntry } from '../domain/fault-state';
import { deriveRetryKeyHex } from '../domain/retry-key';

/** A step the generator may give retained keys: its id, logical id, policy and definition digest. */
export interface EnvelopeStep {
  id: number;
  logicalId: string;
  retryLimit: number;
  stateLimit: number;
  definitionDigest: Buffer;
}

export interface EnvelopeRow {
  id: number;
  payload: { checkpoint: string; entries: Record<string, unknown>[] };
  checksumHex: string;
  keys: number;
}

const PHASES: FaultPhase[] = ['read', 'process', 'write'];
const CATEGORIES: FailureCategory[] = [
  'TRANSIENT_INFRASTRUCTURE',
  'TIMEOUT',
  'USER_COMPONENT',
  'SERIALIZATION',
  'OPTIMISTIC_CONFLICT',
];
// One envelope in this many has a checksum that does not match, so the CORRUPT view has rows at scale too.
const CORRUPT_EVERY = 211;

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Valid, checksummed fault-state envelopes built by the domain's own writer
 * (newEnvelope + checksum), so the console reads them as the runtime would have
 * written them. Deterministic in the step id: the same load gives the same keys.
 */
export function envelopeFor(step: EnvelopeStep, wantedKeys: number): EnvelopeRow {
  const checkpoint = sha256Hex(`scale-checkpoint:${step.id}`);
  const count = Math.max(1, Math.min(wantedKeys, step.stateLimit, 4));
  const entries: FaultStateEntry[] = [];
  for (let i = 0; i < count; i += 1) {
    const seed = step.id * 7 + i;
    const phase = PHASES[seed % PHASES.length]!;
    const key = deriveRetryKeyHex({
      definitionDigest: step.definitionDigest,
      stepName: step.logicalId,
      phase,
      checkpointDigest: checkpoint,
      ordinal: seed,
    });
    if (!key.ok) throw new Error(`retry key for step ${step.id}: ${key.error.kind}`);
    const ordinal = 1 + (seed % Math.max(1, step.retryLimit));
    entries.push({
      key: key.value,
      phase,
      category: CATEGORIES[(seed >> 1) % CATEGORIES.length]!,
      ordinal,
      revision: 'classifier_v3',
    });
  }
  const envelope = newEnvelope(checkpoint, entries);
  if (!envelope.ok) throw new Error(`envelope for step ${step.id}: ${envelope.error.kind}`);
  const sum = checksum(envelope.value);
  if (!sum.ok) throw new Error(`checksum for step ${step.id}`);
  const corrupt = step.id % CORRUPT_EVERY === 0;
  return {
    id: step.id,
    payload: {
      checkpoint,
      entries: envelope.value.entries.map((e) => ({
        category: e.category,
        key: e.key,
        ordinal: e.ordinal,
        phase: e.phase,
        revision: e.revision,
      })),
    },
    checksumHex: corrupt ? sha256Hex(`corrupt:${step.id}`) : Buffer.from(sum.value).toString('hex'),
    keys: corrupt ? 0 : entries.length,
  };
}
