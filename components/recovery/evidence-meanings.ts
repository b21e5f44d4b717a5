import type { OwnerObservation } from '@/lib/domain/batch-status';

type MarkerKey = 'unknownCommit' | 'completedPartition' | 'committedFlowDecision' | 'ambiguousExternalEffect';

/**
 * Each marker of the recovery snapshot (docs/design.md#recovery-snapshot)
 * with what it means for a takeover, set and clear, in one sentence each.
 */
export const MARKERS: { key: MarkerKey; code: string; set: string; clear: string }[] = [
  {
    key: 'unknownCommit',
    code: 'unknown_commit',
    set:
      'The runtime cannot tell whether the last commit landed: ' +
      'a takeover to FAILED must carry reason UNKNOWN_EFFECT, and a restart must first find out what that commit did.',
    clear: 'The outcome of every commit is known.',
  },
  {
    key: 'completedPartition',
    code: 'completed_partition',
    set: 'A partition of this execution has already completed; the takeover leaves its committed output in place.',
    clear: 'No partition of this execution has completed.',
  },
  {
    key: 'committedFlowDecision',
    code: 'committed_flow_decision',
    set: 'The job has committed a flow decision (which step runs next); the takeover leaves that decision in place.',
    clear: 'No flow decision has been committed.',
  },
  {
    key: 'ambiguousExternalEffect',
    code: 'ambiguous_external_effect',
    set:
      'The job does not declare atomic same-resource delivery, ' +
      'so effects outside this database may have happened after the last checkpoint: check them before confirming.',
    clear: 'The job declares atomic same-resource delivery: its effects commit together with its checkpoints.',
  },
];

/** The owner observation in an approver's words: who holds the execution and what a takeover does to them. */
export const OWNER_MEANINGS: Record<OwnerObservation, { label: string; meaning: string }> = {
  ABSENT: { label: 'Absent', meaning: 'No process holds the owner token: nothing is running this execution.' },
  CURRENT_PROCESS: {
    label: 'This console',
    meaning: 'This Keel process holds the owner token; it never takes over its own executions.',
  },
  OTHER_PROCESS: {
    label: 'Another process',
    meaning:
      'A runtime worker holds the owner token but has gone quiet; the takeover moves the version on, ' +
      'so that worker’s next guarded write fails.',
  },
};
