import type { OwnerObservation } from '../domain/batch-status';
import type { CandidateAssessment } from '../domain/candidate-assessment';
import type { OperatorRequestEntry } from '../domain/operator-request';

/** What the execution detail shows: shared by the server query, the read API and the page. */
export interface StepDetail {
  id: number;
  logicalId: string;
  status: string;
  counts: Record<'read' | 'processed' | 'write' | 'filter' | 'commit' | 'rollback', number>;
  retries: Record<'read' | 'process' | 'write', number>;
  skips: Record<'read' | 'process' | 'write', number>;
  checkpoint: { format: number; schema: string; schemaVersion: number; encodedLen: number } | null;
  faultState:
    | { kind: 'empty' }
    | { kind: 'retained'; entries: number; limits: { retryLimit: number; stateLimit: number } | null }
    | { kind: 'corrupt'; error: string };
  updatedAt: string;
}

export interface ExecutionDetail {
  id: number;
  jobName: string;
  definitionRevision: string;
  deliveryMode: string | null;
  instanceId: number;
  status: string;
  attempt: number;
  version: number;
  exitCode: string | null;
  failureCategory: string | null;
  createdAt: string;
  startedAt: string | null;
  endedAt: string | null;
  updatedAt: string;
  stale: boolean;
  owner: OwnerObservation;
  stopRequest: { at: string; by: string } | null;
  steps: StepDetail[];
  decisions: {
    id: number;
    executionVersion: number;
    priorStatus: string;
    resultingStatus: string;
    reasonCode: string;
    operatorReference: string;
    evidenceDigest: string;
    decidedAt: string;
  }[];
  proposals: {
    id: number;
    status: string;
    proposerLogin: string;
    deciderLogin: string | null;
    createdAt: string;
    decidedAt: string | null;
    resultingStatus: string | null;
    reason: string | null;
  }[];
  /** The runtime's `ob_operator_request` rows for the execution, newest first. */
  operatorRequests: OperatorRequestEntry[];
  audit: {
    id: number;
    at: string;
    actorLogin: string;
    actorRole: string;
    action: string;
    outcome: string;
    code: string | null;
    reason: string | null;
  }[];
  serverNow: string;
}

/** The detail as the read API sends it: with whether a takeover may be requested now (or the rule it fails). */
export type ExecutionDetailView = ExecutionDetail & { candidacy: CandidateAssessment };
