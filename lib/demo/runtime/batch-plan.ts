import { randomBytes, randomInt } from 'node:crypto';
import type { FailureCategory, FaultPhase } from '../../domain/batch-status';
import type { BatchRuntime, ChunkCounts, StepCheckpoint } from '../../simulator/ports/batch-runtime';
import { sha256 } from '../random';
import { checkpointDescriptor, checkpointDigestHex, DEMO_DEFINITIONS, manifestFor } from '../seed-batch';

export type StepPlan = (typeof DEMO_DEFINITIONS)[number]['steps'][number];

/** A demo job definition as registered, with the digest its retry keys are derived under. */
export interface DemoDefinition {
  id: number;
  jobName: string;
  manifestDigestHex: string;
  steps: readonly StepPlan[];
}

/**
 * What becomes of one execution. Most run to the end; the rare fates are dealt from a
 * fixed rotation rather than by chance, so a newcomer meets a silent owner and an
 * UNKNOWN execution within the first minute instead of maybe never.
 */
export type Fate =
  | { kind: 'normal' }
  | { kind: 'silent'; afterActions: number }
  | { kind: 'unknown'; afterActions: number }
  | { kind: 'fail'; afterActions: number; category: FailureCategory };

const FAIL_CATEGORIES: FailureCategory[] = [
  'PERMANENT_INFRASTRUCTURE',
  'USER_COMPONENT',
  'INVARIANT',
  'SERIALIZATION',
  'TIMEOUT',
];
export const RETRY_CATEGORIES: FailureCategory[] = [
  'TRANSIENT_INFRASTRUCTURE',
  'TIMEOUT',
  'USER_COMPONENT',
  'SERIALIZATION',
  'OPTIMISTIC_CONFLICT',
];
export const RETRY_PHASES: FaultPhase[] = ['read', 'process', 'write'];

export const pick = <T>(items: readonly T[]): T => items[randomInt(items.length)]!;
export const between = ([min, max]: readonly [number, number]) => min + randomInt(max - min + 1);

/** `launch` counts from 1 across the driver's workers. */
export function dealFate(launch: number, cycle: number, failShare: number): Fate {
  const position = launch % cycle;
  if (position === 1) return { kind: 'silent', afterActions: between([2, 5]) };
  if (position === 3) return { kind: 'unknown', afterActions: between([3, 8]) };
  if (Math.random() < failShare)
    return { kind: 'fail', afterActions: between([3, 10]), category: pick(FAIL_CATEGORIES) };
  return { kind: 'normal' };
}

/** The step's checkpoint: how far it has read. Keys in jsonb's own order, so the digest survives a round trip. */
export interface ChunkPosition {
  chunk: number;
  offset: number;
}

export const checkpointOf = (position: ChunkPosition): StepCheckpoint => {
  const { checkpointFormat, checkpointSchema, checkpointSchemaVersion } = checkpointDescriptor(null);
  return {
    format: checkpointFormat,
    schema: checkpointSchema,
    schemaVersion: checkpointSchemaVersion,
    payload: { chunk: position.chunk, offset: position.offset },
  };
};

/** The committed checkpoint identity retry keys and envelopes are bound to (as the seed computes it). */
export const positionDigestHex = (position: ChunkPosition) =>
  checkpointDigestHex({ chunk: position.chunk, offset: position.offset });

/** One chunk's counters: a few items filtered or skipped, never a negative count. */
export function chunkCounts(items: number): ChunkCounts {
  const processSkips = Math.random() < 0.1 ? between([1, 3]) : 0;
  const writeSkips = Math.random() < 0.05 ? 1 : 0;
  const processed = items - processSkips;
  const filtered = between([0, Math.floor(processed / 50)]);
  return {
    read: items,
    processed,
    written: Math.max(0, processed - filtered - writeSkips),
    filtered,
    readSkips: 0,
    processSkips,
    writeSkips,
  };
}

let failureSequence = 0;
/** A failure record id, unique within this process and ordered by time. */
export const nextFailureId = () => Date.now() * 1_000 + (failureSequence++ % 1_000);

/** A fresh instance of a job: its identifying parameters carry a nonce so no two launches collide. */
export function newInstanceOf(definition: DemoDefinition) {
  const nonce = randomBytes(6).toString('hex');
  const identifyingParameters = {
    business_date: new Date().toISOString().slice(0, 10),
    shard: randomInt(16),
    run: nonce,
  };
  return {
    instance: {
      jobName: definition.jobName,
      instanceKey: sha256(`${definition.jobName}:${nonce}`),
      identifyingParameters,
    },
    parameters: { run: `${definition.jobName}-${nonce}` },
  };
}

/**
 * Registers the demo's job definitions as a runtime registers its jobs at start; on a
 * seeded database they are found under the same name, revision and digest.
 */
export async function registerDemoDefinitions(runtime: BatchRuntime): Promise<DemoDefinition[]> {
  const registered: DemoDefinition[] = [];
  for (const plan of DEMO_DEFINITIONS) {
    const manifest = manifestFor(plan);
    const manifestDigestHex = sha256(JSON.stringify(manifest)).toString('hex');
    const result = await runtime.registerDefinition({
      jobName: plan.jobName,
      definitionRevision: 'r1',
      manifestFormat: 1,
      manifest,
      manifestDigestHex,
    });
    if (result.ok)
      registered.push({ id: result.value.id, jobName: plan.jobName, manifestDigestHex, steps: plan.steps });
  }
  return registered;
}
