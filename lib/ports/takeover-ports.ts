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
