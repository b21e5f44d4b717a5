import type { AuditLog } from './audit-log';
import type { BatchExecutionCommands } from './batch-execution-commands';
import type { CheckpointStore } from './checkpoint-store';
import type { ProposalRepository } from './proposal-repository';
import type { RecoveryRepository } from './recovery-repository';

/** The ports a recovery use case needs, all bound to one transaction. */
export interface TakeoverPorts {
  recovery: RecoveryRepository;
  proposals: ProposalRepository;
  checkpoints: CheckpointStore;
  executions: BatchExecutionCommands;
  audit: AuditLog;
}

/**
 * Runs work in one transaction. It commits whatever the work wrote when the work
 * returns (a refusal returns too, so its audit event and any status change it made
 * commit), and rolls everything back when the work throws.
 */
export interface TakeoverUnitOfWork {
  transaction<T>(work: (ports: TakeoverPorts) => Promise<T>): Promise<T>;
}
