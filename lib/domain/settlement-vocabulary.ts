/** The closed vocabularies the settlement runtime persists (docs/design.md#settlement-vocabulary). */

export const MAX_U32 = 0xffff_ffff;

/** The audit actions of Keel's settlement use cases (their audit rows feed a receipt's history). */
export const REPLAY_ACTION = 'settlement.replay';
export const DISCARD_ACTION = 'settlement.discard';
export const REQUEUE_ACTION = 'settlement.requeue';

export const SKIP_REASONS = ['denied', 'no_economic_intent', 'zero_charge'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export const FAILURE_CODES = [
  'invalid_receipt_signature',
  'invalid_action_hash',
  'untrusted_receipt_signer',
  'malformed_financial_metadata',
  'invalid_observation',
  'rpc',
  'invalid_input',
  'invalid_dispatch',
  'invalid_binding',
  'unsupported',
  'serialization',
  'signature',
  'verification',
  'backend',
] as const;
export type FailureCode = (typeof FAILURE_CODES)[number];

/** Only transport and storage failures can succeed on replay; the rest are deterministic. */
export const RETRYABLE_FAILURE_CODES = ['rpc', 'backend'] as const satisfies readonly FailureCode[];

export const isSkipReason = (value: string): value is SkipReason => (SKIP_REASONS as readonly string[]).includes(value);
export const isFailureCode = (value: string): value is FailureCode =>
  (FAILURE_CODES as readonly string[]).includes(value);
export const isRetryableFailureCode = (value: string): boolean =>
  (RETRYABLE_FAILURE_CODES as readonly string[]).includes(value);

export const isSha256Hex = (value: string): boolean => /^[0-9a-f]{64}$/i.test(value);

/** A failure carries its code and the hex SHA-256 of its detail, never the detail itself. */
export type SettlementOutcome =
  | { kind: 'Accepted' }
  | { kind: 'Skipped'; reason: SkipReason }
  | { kind: 'Retryable'; code: FailureCode; detailSha256?: string }
  | { kind: 'Permanent'; code: FailureCode; detailSha256?: string };

export type SettlementRouteError =
  | { kind: 'Backend'; detail: string }
  | { kind: 'Conflict'; detail: string }
  | { kind: 'InvalidRecord'; detail: string };
export type SettlementRouteErrorClass = SettlementRouteError['kind'];
export const SETTLEMENT_ROUTE_ERROR_CLASSES = [
  'Backend',
  'Conflict',
  'InvalidRecord',
] as const satisfies readonly SettlementRouteErrorClass[];
export type BackendError = Extract<SettlementRouteError, { kind: 'Backend' }>;
export type Conflict = Extract<SettlementRouteError, { kind: 'Conflict' }>;
export type InvalidRecord = Extract<SettlementRouteError, { kind: 'InvalidRecord' }>;

export const backendError = (detail: string): BackendError => ({ kind: 'Backend', detail });
export const conflictError = (detail: string): Conflict => ({ kind: 'Conflict', detail });
export const invalidRecord = (detail: string): InvalidRecord => ({ kind: 'InvalidRecord', detail });

export type SettlementRoute =
  | { kind: 'NoAction' }
  | { kind: 'RetryScheduled'; attempt: number; nextVisibleAtMs: number }
  | { kind: 'DeadLettered'; attempts: number };

/** The kinds of `keel.settlement_event`, a receipt's history. */
export const SETTLEMENT_EVENT_KINDS = ['claimed', 'retry_scheduled', 'dead_lettered', 'replayed', 'finished'] as const;
export type SettlementEventKind = (typeof SETTLEMENT_EVENT_KINDS)[number];

/** The per-item results a bulk replay job ends with (docs/design.md#bulk-replay). */
export const BULK_REPLAY_ITEM_RESULTS = [
  'replayed',
  // A bulk discard's counterpart of replayed: the dead letter was deleted, its JSON kept in the audit log.
  'discarded',
  // A bulk requeue's counterpart: the retry-scheduled settlement was made due now.
  'requeued',
  'already_replayed',
  'no_longer_dead_lettered',
  // A bulk requeue item whose settlement left the queue or is no longer waiting on a retry.
  'no_longer_retry_scheduled',
  'changed_since_preview',
] as const;
export type BulkReplayItemResult = (typeof BULK_REPLAY_ITEM_RESULTS)[number];

/** A bulk replay job's lifecycle; `keel.bulk_replay`'s CHECK is built from this list. */
export const BULK_REPLAY_STATUSES = ['PREVIEWED', 'RUNNING', 'CANCELLED', 'COMPLETED'] as const;
export type BulkReplayStatus = (typeof BULK_REPLAY_STATUSES)[number];
