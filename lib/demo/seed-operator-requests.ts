import type { DbOrTx } from '../db/client';
import { auditEvent } from '../db/schema/keel';
import {
  obOperatorRequest,
  type NewObJobExecution,
  type NewObJobInstance,
  type NewObOperatorRequest,
} from '../db/schema/oxide-batch';
import { CanonicalWriter } from '../domain/canonical-writer';
import { KEEL_OPERATION_ID_PREFIX } from '../domain/operator-request';
import { chunks } from './random';

const MINUTE = 60_000;
/**
 * Operators of the runtime's own CLI (`oxide-batch --actor ...`);
 * Keel's rows would start their operation id with `keel-`.
 */
const CLI_ACTORS = ['cli:ops', 'cli:ops', 'cli:ops.maria', 'cli:scheduler'] as const;

type Arguments = { kind: 'NONE' } | { kind: 'DEFINITION'; revision: string; manifestDigest: Buffer };

/**
 * The runtime's `operator-request.v1` request digest (its `request.rs`): action, target, version, reason, arguments.
 */
function requestDigest(
  action: string,
  target: string,
  version: number | null,
  reason: string | null,
  args: Arguments,
): Buffer {
  const writer = new CanonicalWriter('oxide-batch.operator-request.v1')
    .string(action)
    .string(target)
    .optionalU64(version)
    .string(reason ?? '');
  if (args.kind === 'NONE') writer.string('NONE');
  else writer.string('DEFINITION').string(args.revision).bytes(args.manifestDigest);
  const digest = writer.digestResult();
  if (!digest.ok) throw new Error(`demo operator request digest: ${digest.error.kind}`);
  return Buffer.from(digest.value, 'hex');
}

export interface OperatorRequestSeedInput {
  definitions: { id: number; digest: Buffer }[];
  instances: NewObJobInstance[];
  executions: NewObJobExecution[];
  nowMs: number;
}

/**
 * The history the runtime's own CLI would have left for the demo executions:
 * a LAUNCH or RESTART for each, the STOP behind every STOPPING one, ABANDON for
 * half of the abandoned ones, and a few refusals the runtime records too (ABANDON
 * of an UNKNOWN execution without a recovery decision, STOP with an outdated
 * version). Derived from the executions alone, so it consumes no random numbers
 * and leaves the rest of the seed as it was.
 */
export function operatorRequestRows({
  definitions,
  instances,
  executions,
  nowMs,
}: OperatorRequestSeedInput): NewObOperatorRequest[] {
  const digestOf = new Map(definitions.map((d) => [d.id, d.digest]));
  const keyOf = new Map(instances.map((i) => [i.id!, i.instanceKey as Buffer]));
  const statusOf = new Map(executions.map((e) => [e.id!, e.status]));
  const rows: NewObOperatorRequest[] = [];
  for (const e of executions) {
    const id = e.id!;
    const instanceId = e.jobInstanceId;
    const version = e.version ?? 0;
    const updatedMs = (e.updatedAt as Date).getTime();
    const actorRef = CLI_ACTORS[id % CLI_ACTORS.length]!;
    const definition: Arguments = { kind: 'DEFINITION', revision: 'r1', manifestDigest: digestOf.get(e.definitionId)! };
    const common = { jobInstanceId: instanceId, jobExecutionId: id, actorRef };
    const restartOf = e.restartOfExecutionId ?? null;
    if (restartOf === null) {
      rows.push({
        ...common,
        action: 'LAUNCH',
        authorizationClass: 'LIFECYCLE',
        operationId: `launch-${instanceId}`,
        requestDigest: requestDigest(
          'LAUNCH',
          `instance-key:${keyOf.get(instanceId)!.toString('hex')}`,
          null,
          null,
          definition,
        ),
        resultStatus: 'STARTING',
        outcomeClass: 'APPLIED',
        requestedAt: e.createdAt as Date,
      });
    } else {
      rows.push({
        ...common,
        action: 'RESTART',
        authorizationClass: 'LIFECYCLE',
        operationId: `restart-${instanceId}-${e.attempt}`,
        requestDigest: requestDigest('RESTART', `instance:${instanceId}`, null, null, definition),
        priorStatus: statusOf.get(restartOf)!,
        resultStatus: 'STARTING',
        outcomeClass: 'APPLIED',
        requestedAt: e.createdAt as Date,
      });
    }
    if (e.status === 'STOPPING' && e.stopRequestedAt) {
      // The runtime's STOP records the request and leaves the status; the worker moved it to STOPPING afterwards.
      // A stop asked through Keel (a demo user, not the runtime's `cli:` actors) carries Keel's operation id prefix.
      const throughKeel = !e.stopRequestedBy!.startsWith('cli:');
      rows.push({
        ...common,
        actorRef: e.stopRequestedBy!,
        action: 'STOP',
        authorizationClass: 'LIFECYCLE',
        operationId: throughKeel ? `${KEEL_OPERATION_ID_PREFIX}stop-${demoStopOperationId(id)}` : `stop-${id}-1`,
        requestDigest: requestDigest('STOP', `execution:${id}`, version - 1, null, { kind: 'NONE' }),
        observedVersion: version - 1,
        priorStatus: 'STARTED',
        resultStatus: 'STARTED',
        outcomeClass: 'APPLIED',
        requestedAt: e.stopRequestedAt as Date,
      });
    }
    if (e.status === 'ABANDONED' && id % 2 === 0) {
      rows.push({
        ...common,
        action: 'ABANDON',
        authorizationClass: 'DESTRUCTIVE',
        operationId: `abandon-${id}`,
        reasonCode: 'CLEANUP',
        requestDigest: requestDigest('ABANDON', `execution:${id}`, version - 1, 'CLEANUP', { kind: 'NONE' }),
        observedVersion: version - 1,
        priorStatus: 'STOPPED',
        resultStatus: 'ABANDONED',
        outcomeClass: 'APPLIED',
        requestedAt: new Date(updatedMs),
      });
    }
    if (e.status === 'UNKNOWN' && id % 3 === 0 && updatedMs + 5 * MINUTE < nowMs) {
      rows.push({
        ...common,
        action: 'ABANDON',
        authorizationClass: 'DESTRUCTIVE',
        operationId: `abandon-${id}`,
        reasonCode: 'CLEANUP',
        requestDigest: requestDigest('ABANDON', `execution:${id}`, version, 'CLEANUP', { kind: 'NONE' }),
        observedVersion: version,
        outcomeClass: 'REJECTED',
        rejectionCode: 'UNRESOLVED_RECOVERY_REQUIRED',
        requestedAt: new Date(updatedMs + 5 * MINUTE),
      });
    }
    const staleStarted = e.status === 'STARTED' && updatedMs < nowMs - 20 * MINUTE;
    if (staleStarted && id % 4 === 0 && version >= 2) {
      // Sent just before the worker's last write, with the version read before the one before it.
      rows.push({
        ...common,
        action: 'STOP',
        authorizationClass: 'LIFECYCLE',
        operationId: `stop-${id}-1`,
        requestDigest: requestDigest('STOP', `execution:${id}`, version - 2, null, { kind: 'NONE' }),
        observedVersion: version - 2,
        outcomeClass: 'REJECTED',
        rejectionCode: 'OPTIMISTIC_CONFLICT',
        requestedAt: new Date(updatedMs - 30_000),
      });
    }
  }
  return rows;
}

/** The operation id the stop dialog would have made for a demo stop asked through Keel. */
const demoStopOperationId = (executionId: number) => `demo-${executionId}`;

/** The seeded demo users' roles, by login: a stop asked through Keel is audited under its asker's role. */
const DEMO_ROLES: Record<string, string> = {
  operator: 'operator',
  approver: 'approver',
  approver2: 'approver',
  admin: 'admin',
};

/**
 * The audit event a stop asked through Keel leaves (lib/services/request-stop.ts):
 * same action, target, operation id, digest and before/after shape, at the time of
 * the request. The actor id stays empty: the demo users are made after this seed.
 */
export function stopAuditEvents(
  requests: (NewObOperatorRequest & { id: number })[],
): (typeof auditEvent.$inferInsert)[] {
  return requests
    .filter(
      (r) =>
        r.action === 'STOP' &&
        r.outcomeClass === 'APPLIED' &&
        r.operationId.startsWith(`${KEEL_OPERATION_ID_PREFIX}stop-`),
    )
    .map((r) => ({
      at: r.requestedAt as Date,
      actorId: null,
      actorLogin: r.actorRef,
      actorRole: DEMO_ROLES[r.actorRef] ?? 'operator',
      action: 'execution.request_stop',
      targetKind: 'batch_execution',
      targetId: String(r.jobExecutionId),
      before: { status: r.priorStatus, version: r.observedVersion, stopRequested: false },
      after: { stopRequestedBy: r.actorRef, version: r.observedVersion, changed: true, operatorRequestId: r.id },
      digest: (r.requestDigest as Buffer).toString('hex'),
      operationId: r.operationId.slice(`${KEEL_OPERATION_ID_PREFIX}stop-`.length),
      outcome: 'APPLIED',
      // Every audit row names the request that wrote it; the seed's is named after the stop it records.
      requestId: `demo-seed-${r.operationId}`,
    }));
}

export async function seedOperatorRequests(db: DbOrTx, input: OperatorRequestSeedInput): Promise<number> {
  const rows = operatorRequestRows(input);
  for (const batch of chunks(rows, 500)) {
    const ids = await db.insert(obOperatorRequest).values(batch).returning({ id: obOperatorRequest.id });
    const audits = stopAuditEvents(batch.map((row, i) => ({ ...row, id: ids[i]!.id })));
    if (audits.length > 0) await db.insert(auditEvent).values(audits);
  }
  return rows.length;
}
