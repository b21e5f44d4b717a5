import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  GOVERNING_SPEC,
  SNAPSHOT_FIELDS,
  acquireLease,
  authenticationTagHex,
  authorizeRetry,
  canReplace,
  compensationPlan,
  evaluateWake,
  isTakeoverCandidate,
  parseCheckpointJson,
  recoverCheckpoint,
  sealCheckpoint,
  toCheckpointJson,
  validateCheckpoint,
  verifyCheckpoint,
  wakeWait,
  type CheckpointError,
  type CheckpointRetryPolicy,
  type CompensationStep,
  type DurableCheckpoint,
  type DurableWait,
} from '@/lib/domain/checkpoint';
import type { Result } from '@/lib/domain/result';

const KEY = Buffer.from('keel-test-checkpoint-key-32-byte', 'utf8');
const OTHER_KEY = Buffer.from('another-checkpoint-key-32-bytes!', 'utf8');

/** The seed's fixture checkpoint. */
function checkpoint(overrides: Partial<DurableCheckpoint> = {}): DurableCheckpoint {
  return {
    governingSpec: GOVERNING_SPEC,
    executionId: 'exec-1',
    snapshots: {
      proposalDigest: 'proposal',
      manifestDigest: 'manifest',
      registryDigest: 'registry',
      policyDigest: 'policy',
      authorizationDigest: 'auth',
    },
    lease: { ownerId: 'worker-a', fencingToken: 1, expiresAt: 20 },
    completedNodeIds: ['charge'],
    wait: null,
    retry: null,
    compensation: [],
    authenticationTag: '',
    ...overrides,
  };
}

function sealed(overrides: Partial<DurableCheckpoint> = {}, key = KEY): DurableCheckpoint {
  const result = sealCheckpoint(checkpoint(overrides), key);
  if (!result.ok) throw new Error(`fixture must seal: ${result.error.reason}`);
  return result.value;
}

const retryPolicy = (overrides: Partial<CheckpointRetryPolicy> = {}): CheckpointRetryPolicy => ({
  retryable: true,
  maxAttempts: 2,
  backoffUnits: 3,
  budgetUnits: 5,
  idempotencyKey: 'key',
  ...overrides,
});

const wait = (overrides: Partial<DurableWait> = {}): DurableWait => ({
  kind: 'event',
  ownerId: 'worker',
  deadline: 10,
  cancellationId: 'cancel',
  ...overrides,
});

const step = (capabilityId: string, order: number, authorizationDigest = 'auth'): CompensationStep => ({
  capabilityId,
  authorizationDigest,
  order,
});

const errorKind = <T>(result: Result<T, CheckpointError>): string | null => (result.ok ? null : result.error.kind);

describe('validateCheckpoint', () => {
  it('accepts the seed fixture, with and without a wait, retry policy and compensation', () => {
    expect(validateCheckpoint(checkpoint())).toEqual({ ok: true, value: checkpoint() });
    const full = checkpoint({ wait: wait(), retry: retryPolicy(), compensation: [step('undo', 1)] });
    expect(validateCheckpoint(full).ok).toBe(true);
  });

  it.each<[string, Partial<DurableCheckpoint>, RegExp]>([
    ['another governing spec', { governingSpec: '110-static-orchestration' }, /governing spec/],
    ['a blank execution id', { executionId: '  ' }, /execution id/],
    ['a blank lease owner', { lease: { ownerId: '\t', fencingToken: 1, expiresAt: 20 } }, /owner/],
    ['fencing token 0', { lease: { ownerId: 'worker-a', fencingToken: 0, expiresAt: 20 } }, /fencing token/],
    ['a negative fencing token', { lease: { ownerId: 'w', fencingToken: -1, expiresAt: 20 } }, /fencing_token/],
    ['a fencing token of 2^53', { lease: { ownerId: 'w', fencingToken: 2 ** 53, expiresAt: 20 } }, /fencing_token/],
    ['a fractional expiry', { lease: { ownerId: 'w', fencingToken: 1, expiresAt: 20.5 } }, /expires_at/],
    ['a NaN expiry', { lease: { ownerId: 'w', fencingToken: 1, expiresAt: Number.NaN } }, /expires_at/],
    ['a wait deadline of 2^53', { wait: wait({ deadline: 2 ** 53 }) }, /wait.deadline/],
    ['an unknown wait kind', { wait: wait({ kind: 'timer' as DurableWait['kind'] }) }, /wait kind/],
    ['max attempts above u32', { retry: retryPolicy({ maxAttempts: 2 ** 32 }) }, /max_attempts/],
    ['backoff units of 2^53', { retry: retryPolicy({ backoffUnits: 2 ** 53 }) }, /backoff_units/],
    ['negative budget units', { retry: retryPolicy({ budgetUnits: -5 }) }, /budget_units/],
    ['a compensation order above u32', { compensation: [step('undo', 2 ** 32)] }, /compensation.order/],
    ['a lone surrogate', { completedNodeIds: ['node-\ud800'] }, /well-formed/],
  ])('refuses %s as InvalidCheckpoint', (_name, overrides, reason) => {
    const result = validateCheckpoint(checkpoint(overrides));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('InvalidCheckpoint');
    expect(result.error.reason).toMatch(reason);
  });

  it.each(SNAPSHOT_FIELDS)('refuses a blank %s, naming it', (field) => {
    const incomplete = checkpoint();
    incomplete.snapshots = { ...incomplete.snapshots, [field]: ' ' };
    expect(validateCheckpoint(incomplete)).toEqual({
      ok: false,
      error: { kind: 'InvalidCheckpoint', reason: `snapshot digests are blank: ${field}` },
    });
  });

  it('accepts the largest safe integers', () => {
    const largest = checkpoint({
      lease: { ownerId: 'w', fencingToken: Number.MAX_SAFE_INTEGER, expiresAt: Number.MAX_SAFE_INTEGER },
      retry: retryPolicy({ maxAttempts: 2 ** 32 - 1, budgetUnits: Number.MAX_SAFE_INTEGER }),
    });
    expect(validateCheckpoint(largest).ok).toBe(true);
  });
});

describe('toCheckpointJson', () => {
  it('uses the runtime field names, with null for an absent wait or retry policy', () => {
    expect(toCheckpointJson(checkpoint({ authenticationTag: 'tag' }))).toEqual({
      governing_spec: GOVERNING_SPEC,
      execution_id: 'exec-1',
      snapshots: {
        proposal_digest: 'proposal',
        manifest_digest: 'manifest',
        registry_digest: 'registry',
        policy_digest: 'policy',
        authorization_digest: 'auth',
      },
      lease: { owner_id: 'worker-a', fencing_token: 1, expires_at: 20 },
      completed_node_ids: ['charge'],
      wait: null,
      retry: null,
      compensation: [],
      authentication_tag: 'tag',
    });
  });

  it('maps a wait, a retry policy and compensation steps', () => {
    const json = toCheckpointJson(
      checkpoint({ wait: wait({ kind: 'human_approval' }), retry: retryPolicy(), compensation: [step('undo', 4)] }),
    );
    expect(json.wait).toEqual({ kind: 'human_approval', owner_id: 'worker', deadline: 10, cancellation_id: 'cancel' });
    expect(json.retry).toEqual({
      retryable: true,
      max_attempts: 2,
      backoff_units: 3,
      budget_units: 5,
      idempotency_key: 'key',
    });
    expect(json.compensation).toEqual([{ capability_id: 'undo', authorization_digest: 'auth', order: 4 }]);
  });
});

describe('authentication tag', () => {
  // Written out by hand: RFC 8785 sorts keys by code unit and the tag is blanked.
  const CANONICAL =
    '{"authentication_tag":"","compensation":[],"completed_node_ids":["charge"],' +
    '"execution_id":"exec-1","governing_spec":"111-durable-dynamic-orchestration",' +
    '"lease":{"expires_at":20,"fencing_token":1,"owner_id":"worker-a"},"retry":null,' +
    '"snapshots":{"authorization_digest":"auth","manifest_digest":"manifest","policy_digest":"policy",' +
    '"proposal_digest":"proposal","registry_digest":"registry"},"wait":null}';

  it('is the hex HMAC-SHA256 of the canonical snake_case JSON with an empty tag', () => {
    const expected = createHmac('sha256', KEY).update(CANONICAL, 'utf8').digest('hex');
    expect(authenticationTagHex(checkpoint(), KEY)).toBe(expected);
    expect(authenticationTagHex(checkpoint({ authenticationTag: 'stale' }), KEY)).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('depends on the key and on every field', () => {
    const base = authenticationTagHex(checkpoint(), KEY);
    expect(authenticationTagHex(checkpoint(), OTHER_KEY)).not.toBe(base);
    const variants: Partial<DurableCheckpoint>[] = [
      { executionId: 'exec-2' },
      { lease: { ownerId: 'worker-a', fencingToken: 2, expiresAt: 20 } },
      { lease: { ownerId: 'worker-a', fencingToken: 1, expiresAt: 21 } },
      { completedNodeIds: ['charge', 'ship'] },
      { wait: wait() },
      { retry: retryPolicy() },
      { compensation: [step('undo', 1)] },
    ];
    for (const variant of variants) expect(authenticationTagHex(checkpoint(variant), KEY)).not.toBe(base);
  });
});

describe('sealCheckpoint and verifyCheckpoint', () => {
  it('fills the tag so the checkpoint verifies, and recomputes a stale tag', () => {
    const result = sealCheckpoint(checkpoint({ authenticationTag: 'carried-over' }), KEY);
    expect(result.ok && result.value.authenticationTag).toBe(authenticationTagHex(checkpoint(), KEY));
    expect(result.ok && verifyCheckpoint(result.value, KEY)).toBe(true);
  });

  it('refuses an incomplete checkpoint without sealing it', () => {
    const result = sealCheckpoint(checkpoint({ executionId: '' }), KEY);
    expect(errorKind(result)).toBe('InvalidCheckpoint');
  });

  it('rejects a tampered tag, a tampered field, another key and an unsealed checkpoint', () => {
    const good = sealed();
    expect(verifyCheckpoint({ ...good, authenticationTag: 'invalid' }, KEY)).toBe(false);
    expect(verifyCheckpoint({ ...good, authenticationTag: good.authenticationTag.toUpperCase() }, KEY)).toBe(false);
    expect(verifyCheckpoint({ ...good, lease: { ...good.lease, expiresAt: 10_000 } }, KEY)).toBe(false);
    expect(verifyCheckpoint({ ...good, completedNodeIds: [] }, KEY)).toBe(false);
    expect(verifyCheckpoint(good, OTHER_KEY)).toBe(false);
    expect(verifyCheckpoint(checkpoint(), KEY)).toBe(false);
  });

  it('never verifies an invalid checkpoint, even with a matching tag', () => {
    const invalid = checkpoint({ executionId: ' ' });
    const tagged = { ...invalid, authenticationTag: authenticationTagHex(invalid, KEY) };
    expect(verifyCheckpoint(tagged, KEY)).toBe(false);
  });
});

describe('canReplace', () => {
  const stored = sealed({ lease: { ownerId: 'worker-a', fencingToken: 5, expiresAt: 20 } });
  const incoming = (ownerId: string, fencingToken: number) =>
    sealed({ lease: { ownerId, fencingToken, expiresAt: 30 } });

  it('writes over nothing, a lower token, or the same token held by the same owner', () => {
    expect(canReplace(null, incoming('worker-b', 1))).toEqual({ ok: true, value: incoming('worker-b', 1) });
    expect(canReplace(stored, incoming('worker-b', 6)).ok).toBe(true);
    expect(canReplace(stored, incoming('worker-a', 5)).ok).toBe(true);
  });

  it('reports StaleLease for an older token or the same token held by another owner', () => {
    expect(canReplace(stored, incoming('worker-a', 4))).toEqual({ ok: false, error: { kind: 'StaleLease' } });
    expect(canReplace(stored, incoming('worker-b', 5))).toEqual({ ok: false, error: { kind: 'StaleLease' } });
  });

  it('refuses to replace another execution', () => {
    expect(errorKind(canReplace(stored, sealed({ executionId: 'exec-2' })))).toBe('InvalidCheckpoint');
  });
});

describe('recoverCheckpoint', () => {
  it('recovers a live authenticated checkpoint, then fails closed on snapshots and expiry (seed)', () => {
    const stored = sealed();
    expect(recoverCheckpoint(stored, stored.snapshots, 10, KEY)).toEqual({ ok: true, value: stored });
    const wrong = { ...stored.snapshots, policyDigest: 'other' };
    expect(recoverCheckpoint(stored, wrong, 10, KEY)).toEqual({
      ok: false,
      error: { kind: 'SnapshotMismatch', fields: ['policyDigest'] },
    });
    expect(recoverCheckpoint(stored, stored.snapshots, 20, KEY)).toEqual({ ok: false, error: { kind: 'StaleLease' } });
    expect(errorKind(recoverCheckpoint(stored, stored.snapshots, Number.NaN, KEY))).toBe('StaleLease');
  });

  it('refuses an absent, incomplete or tampered checkpoint (seed)', () => {
    const expected = checkpoint().snapshots;
    expect(recoverCheckpoint(null, expected, 0, KEY)).toEqual({
      ok: false,
      error: { kind: 'InvalidCheckpoint', reason: 'checkpoint is absent' },
    });
    const incomplete = sealed();
    incomplete.snapshots = { ...incomplete.snapshots, policyDigest: '' };
    expect(errorKind(recoverCheckpoint(incomplete, expected, 0, KEY))).toBe('InvalidCheckpoint');
    const tampered = { ...sealed(), authenticationTag: 'invalid' };
    expect(recoverCheckpoint(tampered, expected, 0, KEY)).toEqual({
      ok: false,
      error: { kind: 'AuthenticationFailed' },
    });
  });

  it('reports the first failure in the order recover checks them', () => {
    const expected = checkpoint().snapshots;
    const otherSnapshots = { ...expected, manifestDigest: 'm2', registryDigest: 'r2' };
    const incompleteAndTampered = { ...sealed(), executionId: '', authenticationTag: 'x' };
    expect(errorKind(recoverCheckpoint(incompleteAndTampered, otherSnapshots, 99, KEY))).toBe('InvalidCheckpoint');
    const tampered = { ...sealed(), authenticationTag: 'x' };
    expect(errorKind(recoverCheckpoint(tampered, otherSnapshots, 99, KEY))).toBe('AuthenticationFailed');
    expect(recoverCheckpoint(sealed(), otherSnapshots, 99, KEY)).toEqual({
      ok: false,
      error: { kind: 'SnapshotMismatch', fields: ['manifestDigest', 'registryDigest'] },
    });
    expect(errorKind(recoverCheckpoint(sealed(), expected, 99, OTHER_KEY))).toBe('AuthenticationFailed');
  });
});

describe('acquireLease', () => {
  it('refuses a blank owner, and a token or expiry that does not strictly advance (seed)', () => {
    const current = sealed();
    const attempts: [string, number, number][] = [
      ['', 2, 21],
      ['   ', 2, 21],
      ['worker-b', 1, 21],
      ['worker-b', 0, 21],
      ['worker-b', 2, 20],
      ['worker-b', 2, 19],
      ['worker-b', Number.NaN, 21],
      ['worker-b', 2, Number.NaN],
    ];
    for (const [owner, token, expiresAt] of attempts) {
      expect(acquireLease(current, owner, token, expiresAt)).toEqual({ ok: false, error: { kind: 'StaleLease' } });
    }
  });

  it('hands over the lease with a cleared tag that must be re-sealed (seed)', () => {
    const current = sealed();
    const result = acquireLease(current, 'worker-b', 2, 21);
    if (!result.ok) throw new Error('lease transfer must succeed');
    expect(result.value.lease).toEqual({ ownerId: 'worker-b', fencingToken: 2, expiresAt: 21 });
    expect(result.value.authenticationTag).toBe('');
    expect(current.lease.ownerId).toBe('worker-a');
    expect(verifyCheckpoint(result.value, KEY)).toBe(false);
    expect(verifyCheckpoint({ ...result.value, authenticationTag: current.authenticationTag }, KEY)).toBe(false);
    const resealed = sealCheckpoint(result.value, KEY);
    expect(resealed.ok && verifyCheckpoint(resealed.value, KEY)).toBe(true);
    expect(resealed.ok && canReplace(current, resealed.value).ok).toBe(true);
  });
});

describe('authorizeRetry', () => {
  it('returns the backoff units while attempts and budget remain (seed)', () => {
    const declared = checkpoint({ retry: retryPolicy() });
    expect(authorizeRetry(declared, 0, 0)).toEqual({ ok: true, value: 3 });
    expect(authorizeRetry(declared, 1, 4)).toEqual({ ok: true, value: 3 });
  });

  it('reports RetryBudgetExhausted once attempts or budget are used up (seed)', () => {
    const declared = checkpoint({ retry: retryPolicy() });
    expect(authorizeRetry(declared, 2, 0)).toEqual({ ok: false, error: { kind: 'RetryBudgetExhausted' } });
    expect(authorizeRetry(declared, 0, 5)).toEqual({ ok: false, error: { kind: 'RetryBudgetExhausted' } });
    expect(errorKind(authorizeRetry(declared, Number.NaN, 0))).toBe('RetryBudgetExhausted');
    const bounded = checkpoint({ retry: retryPolicy({ maxAttempts: 1, backoffUnits: 1, budgetUnits: 1 }) });
    expect(errorKind(authorizeRetry(bounded, 0, 1))).toBe('RetryBudgetExhausted');
  });

  it('reports RetryNotDeclared without a policy, retryability or idempotency key, before the budget', () => {
    expect(authorizeRetry(checkpoint(), 0, 0)).toEqual({ ok: false, error: { kind: 'RetryNotDeclared' } });
    const notRetryable = checkpoint({ retry: retryPolicy({ retryable: false }) });
    expect(errorKind(authorizeRetry(notRetryable, 0, 0))).toBe('RetryNotDeclared');
    const blankKey = checkpoint({ retry: retryPolicy({ idempotencyKey: ' ' }) });
    expect(errorKind(authorizeRetry(blankKey, 99, 99))).toBe('RetryNotDeclared');
  });
});

describe('wakeWait', () => {
  const waiting = checkpoint({ wait: wait() });

  it('wakes the owner up to and including the deadline (seed)', () => {
    expect(wakeWait(waiting, { ownerId: 'worker', nowMs: 10, cancelled: false })).toEqual({ ok: true, value: wait() });
    expect(wakeWait(waiting, { ownerId: 'worker', nowMs: 0, cancelled: false }).ok).toBe(true);
  });

  it('lets cancellation win over expiry and ownership (seed)', () => {
    expect(wakeWait(waiting, { ownerId: 'worker', nowMs: 1, cancelled: true })).toEqual({
      ok: false,
      error: { kind: 'Cancelled' },
    });
    expect(errorKind(wakeWait(waiting, { ownerId: 'intruder', nowMs: 99, cancelled: true }))).toBe('Cancelled');
  });

  it('reports WaitExpired after the deadline, before checking the owner (seed)', () => {
    const schedule = checkpoint({ wait: wait({ kind: 'schedule', ownerId: 'worker-b' }) });
    expect(errorKind(wakeWait(schedule, { ownerId: 'worker-b', nowMs: 11, cancelled: false }))).toBe('WaitExpired');
    expect(errorKind(wakeWait(schedule, { ownerId: 'worker-c', nowMs: 11, cancelled: false }))).toBe('WaitExpired');
    expect(errorKind(wakeWait(schedule, { ownerId: 'worker-b', nowMs: Number.NaN, cancelled: false }))).toBe(
      'WaitExpired',
    );
  });

  it('reports StaleLease when another owner wakes the wait (seed)', () => {
    const schedule = checkpoint({ wait: wait({ kind: 'schedule', ownerId: 'worker-b' }) });
    expect(wakeWait(schedule, { ownerId: 'worker-c', nowMs: 10, cancelled: false })).toEqual({
      ok: false,
      error: { kind: 'StaleLease' },
    });
  });

  it('refuses to wake a checkpoint that is not waiting', () => {
    expect(errorKind(wakeWait(checkpoint(), { ownerId: 'worker', nowMs: 0, cancelled: false }))).toBe(
      'InvalidCheckpoint',
    );
  });

  it('applies the same rules to a standalone human-approval wait', () => {
    const approval = wait({ kind: 'human_approval', ownerId: 'proposal-7', deadline: 1_000 });
    expect(evaluateWake(approval, { ownerId: 'proposal-7', nowMs: 1_000, cancelled: false }).ok).toBe(true);
    expect(errorKind(evaluateWake(approval, { ownerId: 'proposal-7', nowMs: 1_001, cancelled: false }))).toBe(
      'WaitExpired',
    );
  });
});

describe('compensationPlan', () => {
  it('runs authorized steps in reverse order (seed)', () => {
    const steps = [step('undo-second', 2), step('undo-first', 1)];
    const result = compensationPlan(checkpoint({ compensation: steps }), 'auth');
    expect(result.ok && result.value.map((s) => s.capabilityId)).toEqual(['undo-second', 'undo-first']);
  });

  it('sorts by order descending without touching the stored steps, keeping ties in place', () => {
    const steps = [step('a', 1), step('c', 3), step('b1', 2), step('b2', 2)];
    const stored = checkpoint({ compensation: steps });
    const result = compensationPlan(stored, 'auth');
    expect(result.ok && result.value.map((s) => s.capabilityId)).toEqual(['c', 'b1', 'b2', 'a']);
    expect(stored.compensation.map((s) => s.capabilityId)).toEqual(['a', 'c', 'b1', 'b2']);
    expect(compensationPlan(checkpoint(), 'auth')).toEqual({ ok: true, value: [] });
  });

  it('refuses the whole plan when any step is unbound or has no capability (seed)', () => {
    const unauthorized = [
      [step('', 1, 'wrong')],
      [step('undo', 2), step('undo-other', 1, 'wrong')],
      [step('undo', 2), step('  ', 1)],
    ];
    for (const compensation of unauthorized) {
      expect(compensationPlan(checkpoint({ compensation }), 'auth')).toEqual({
        ok: false,
        error: { kind: 'CompensationUnauthorized' },
      });
    }
  });

  it('never treats a blank authorization digest as a binding', () => {
    const compensation = [step('undo', 1, '')];
    expect(errorKind(compensationPlan(checkpoint({ compensation }), ''))).toBe('CompensationUnauthorized');
  });
});

describe('isTakeoverCandidate', () => {
  it('holds once the authenticated lease has expired by the server clock', () => {
    const stored = sealed();
    expect(isTakeoverCandidate(stored, KEY, 19)).toBe(false);
    expect(isTakeoverCandidate(stored, KEY, 20)).toBe(true);
    expect(isTakeoverCandidate(stored, KEY, 21)).toBe(true);
  });

  it('never holds for a checkpoint whose tag does not verify', () => {
    const stored = sealed();
    expect(isTakeoverCandidate({ ...stored, authenticationTag: 'forged' }, KEY, 25)).toBe(false);
    expect(isTakeoverCandidate({ ...stored, lease: { ...stored.lease, expiresAt: 1 } }, KEY, 25)).toBe(false);
    expect(isTakeoverCandidate(stored, OTHER_KEY, 25)).toBe(false);
  });
});

describe('parseCheckpointJson', () => {
  it('round-trips a sealed checkpoint through JSON text', () => {
    const stored = sealed({ wait: wait(), retry: retryPolicy(), compensation: [step('undo', 1)] });
    const parsed = parseCheckpointJson(JSON.parse(JSON.stringify(toCheckpointJson(stored))));
    expect(parsed).toEqual({ ok: true, value: stored });
    expect(parsed.ok && verifyCheckpoint(parsed.value, KEY)).toBe(true);
  });

  const declaredRetry = toCheckpointJson(checkpoint({ retry: retryPolicy() })).retry;
  const lease = (fencingToken: unknown) => ({ owner_id: 'w', fencing_token: fencingToken, expires_at: 2 });

  it.each<[string, (json: Record<string, unknown>) => unknown, RegExp]>([
    ['a non-object', () => 'checkpoint', /checkpoint is not an object/],
    ['an unknown field', (json) => ({ ...json, secret: 'x' }), /unknown fields: secret/],
    ['a missing field', ({ execution_id: _omitted, ...rest }) => rest, /execution_id is not a string/],
    ['a string token', (json) => ({ ...json, lease: lease('1') }), /fencing_token/],
    ['a numeric node id', (json) => ({ ...json, completed_node_ids: [1] }), /completed_node_ids\[0\]/],
    ['a string retryable flag', (json) => ({ ...json, retry: { ...declaredRetry, retryable: 'yes' } }), /retryable/],
    [
      'a malformed compensation step',
      (json) => ({ ...json, compensation: [{ capability_id: 'undo', order: 1 }] }),
      /compensation\[0\].authorization_digest/,
    ],
    ['an integer beyond 2^53', (json) => ({ ...json, lease: lease(2 ** 53 + 2) }), /fencing_token/],
    [
      'an unknown wait kind',
      (json) => ({ ...json, wait: { kind: 'timer', owner_id: 'w', deadline: 1, cancellation_id: 'c' } }),
      /wait kind/,
    ],
  ])('refuses %s as InvalidCheckpoint', (_name, mutate, reason) => {
    const json = toCheckpointJson(sealed()) as unknown as Record<string, unknown>;
    const result = parseCheckpointJson(mutate(json));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.kind).toBe('InvalidCheckpoint');
    if (result.error.kind === 'InvalidCheckpoint') expect(result.error.reason).toMatch(reason);
  });
});

describe('the nine checkpoint errors', () => {
  it('are each produced by the function that owns them', () => {
    const stored = sealed({ wait: wait(), retry: retryPolicy(), compensation: [step('undo', 1, 'wrong')] });
    const produced = new Set([
      errorKind(recoverCheckpoint(null, stored.snapshots, 0, KEY)),
      errorKind(recoverCheckpoint({ ...stored, authenticationTag: 'x' }, stored.snapshots, 0, KEY)),
      errorKind(recoverCheckpoint(stored, { ...stored.snapshots, proposalDigest: 'p2' }, 0, KEY)),
      errorKind(acquireLease(stored, 'worker-b', 1, 99)),
      errorKind(wakeWait(stored, { ownerId: 'worker', nowMs: 11, cancelled: false })),
      errorKind(wakeWait(stored, { ownerId: 'worker', nowMs: 0, cancelled: true })),
      errorKind(authorizeRetry(checkpoint(), 0, 0)),
      errorKind(authorizeRetry(stored, 2, 0)),
      errorKind(compensationPlan(stored, 'auth')),
    ]);
    expect([...produced].sort()).toEqual(
      [
        'AuthenticationFailed',
        'Cancelled',
        'CompensationUnauthorized',
        'InvalidCheckpoint',
        'RetryBudgetExhausted',
        'RetryNotDeclared',
        'SnapshotMismatch',
        'StaleLease',
        'WaitExpired',
      ].sort(),
    );
  });
});
