import 'server-only';
import { postgresAuditLog } from '../adapters/audit-log';
import { postgresExportSlots, type ExportSlots } from '../adapters/export-slots';
import { systemProposerClock } from '../adapters/proposer-clock';
import { postgresSettlementUnitOfWork } from '../adapters/settlement-replay';
import { postgresSignInLockout, type SignInLockout } from '../adapters/sign-in-lockout';
import { postgresSsoRefusals } from '../adapters/sso-audit';
import { postgresTakeoverUnitOfWork } from '../adapters/takeover-unit-of-work';
import { authPasswordHasher, postgresUserUnitOfWork } from '../adapters/user-directory';
import { postgresWebhookUnitOfWork } from '../adapters/webhook-deliveries';
import { httpWebhookSender } from '../adapters/webhook-sender';
import type { AuditLog } from '../ports/audit-log';
import type { SettlementReplayPorts } from '../ports/settlement-replay';
import type { UnitOfWork } from '../ports/unit-of-work';
import type { RecoveryServiceDeps } from '../services/recovery-common';
import type { UserServicePorts } from '../services/users';
import type { WebhookAdminPorts } from '../services/webhook-admin';
import { EXPORT_LIMITS } from './audit-export';
import { runtime } from './runtime';
import { singleton } from './singletons';

/**
 * The composition root: the one place in the server that builds Keel's adapters and
 * hands them to services, actions, routes and workers. (Tests, the demo runtime and
 * the CLI build their own over their own connections.)
 */

export function recoveryDeps(): RecoveryServiceDeps {
  const { db, settings, ownerToken } = runtime();
  if (!settings.checkpointKey) throw new Error('KEEL_CHECKPOINT_KEY is required');
  return {
    uow: postgresTakeoverUnitOfWork(db, { checkpointKey: settings.checkpointKey }),
    // One clock per process: the proposer compares each server time with the last one this process saw.
    clock: singleton('proposer-clock', systemProposerClock),
    settings: {
      staleThresholdMs: settings.staleThresholdMs,
      maxClockSkewMs: settings.maxClockSkewMs,
      proposalTtlMs: settings.proposalTtlMs,
      orchestrationLeaseMs: settings.orchestrationLeaseMs,
    },
    ownerToken,
  };
}

/** The settlement services' unit of work (replay, discard, requeue, bulk replay, and the bulk replay worker) over the server's pool. */
export function settlementTransactions(): UnitOfWork<SettlementReplayPorts> {
  return postgresSettlementUnitOfWork(runtime().db);
}

/** The audit CSV exports' slots, shared with every other process and instance through PostgreSQL. */
export function exportSlots(): ExportSlots {
  return postgresExportSlots(runtime().db, EXPORT_LIMITS);
}

/** User management: its unit of work and better-auth's password hasher. */
export function userServicePorts(): UserServicePorts {
  const { db, auth } = runtime();
  return { unitOfWork: postgresUserUnitOfWork(db), passwords: authPasswordHasher(auth) };
}

/** The Webhooks page's Send test and Retry now: the delivery store and a sender with this process's endpoint settings. */
export function webhookAdminPorts(): WebhookAdminPorts {
  const { db, settings } = runtime();
  const baseUrl = settings.baseUrl ?? `http://localhost:${settings.port}`;
  return {
    unitOfWork: postgresWebhookUnitOfWork(db),
    sender: httpWebhookSender({ endpoints: settings.webhooks.endpoints, baseUrl }),
  };
}

/** The audit log `action()` writes refusals to, outside the handler's transaction. */
export function actionAuditLog(): AuditLog {
  return postgresAuditLog(runtime().db);
}

/** What the `/api/auth/*` surface records: failed sign-ins (lockout) and refused SSO callbacks. */
export function authSurfacePorts(): {
  lockout: SignInLockout;
  recordSsoRefusal: (code: string, requestId: string | null) => Promise<void>;
} {
  const { db } = runtime();
  return { lockout: postgresSignInLockout(db), recordSsoRefusal: postgresSsoRefusals(db) };
}
