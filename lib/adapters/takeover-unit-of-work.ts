import 'server-only';
import type { DbOrTx } from '../db/client';
import type { TakeoverPorts } from '../ports/takeover-ports';
import type { UnitOfWork } from '../ports/unit-of-work';
import { postgresAuditLog } from './audit-log';
import { postgresBatchExecutionCommands } from './batch-execution-commands';
import { postgresCheckpointStore } from './checkpoint-store';
import { postgresProposalRepository } from './proposal-repository';
import { postgresRecoveryRepository } from './recovery-repository';
import { postgresUnitOfWork } from './unit-of-work';

/**
 * The recovery use cases' ports over one transaction; row locks (the proposal, then the target) serialize decisions.
 */
export function postgresTakeoverUnitOfWork(db: DbOrTx, options: { checkpointKey: Buffer }): UnitOfWork<TakeoverPorts> {
  return postgresUnitOfWork(db, (tx) => ({
    recovery: postgresRecoveryRepository(tx),
    proposals: postgresProposalRepository(tx),
    checkpoints: postgresCheckpointStore(tx, options.checkpointKey),
    executions: postgresBatchExecutionCommands(tx),
    audit: postgresAuditLog(tx),
  }));
}
