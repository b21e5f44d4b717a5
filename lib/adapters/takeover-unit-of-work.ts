import 'server-only';
import type { Database } from '../db/client';
import type { TakeoverPorts, TakeoverUnitOfWork } from '../ports/takeover-unit-of-work';
import { postgresAuditLog } from './audit-log';
import { postgresBatchExecutionCommands } from './batch-execution-commands';
import { postgresCheckpointStore } from './checkpoint-store';
import { postgresProposalRepository } from './proposal-repository';
import { postgresRecoveryRepository } from './recovery-repository';

/**
 * One READ COMMITTED transaction per use case, every port bound to it. Row locks
 * (FOR UPDATE on the proposal, then the target) serialize the decisions; the default
 * isolation is what lets a waiter see the winner's committed row once it gets the lock.
 */
export function postgresTakeoverUnitOfWork(db: Database, options: { checkpointKey: Buffer }): TakeoverUnitOfWork {
  return {
    transaction: (work) =>
      db.transaction((tx) => {
        const ports: TakeoverPorts = {
          recovery: postgresRecoveryRepository(tx),
          proposals: postgresProposalRepository(tx),
          checkpoints: postgresCheckpointStore(tx, options.checkpointKey),
          executions: postgresBatchExecutionCommands(tx),
          audit: postgresAuditLog(tx),
        };
        return work(ports);
      }),
  };
}
