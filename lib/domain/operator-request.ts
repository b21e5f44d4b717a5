/**
 * Keel prefixes every operation id it writes into `ob_operator_request` with this
 * (`keel-proposal-<id>` for a confirmed takeover), so a row tells whether it came
 * through Keel or through the runtime's own operator service (its CLI).
 */
export const KEEL_OPERATION_ID_PREFIX = 'keel-';

export type OperatorRequestOrigin = 'keel' | 'runtime';

export const operatorRequestOrigin = (operationId: string): OperatorRequestOrigin =>
  operationId.startsWith(KEEL_OPERATION_ID_PREFIX) ? 'keel' : 'runtime';

/** One `ob_operator_request` row as the console shows it. */
export interface OperatorRequestEntry {
  id: number;
  action: string;
  authorizationClass: string;
  operationId: string;
  origin: OperatorRequestOrigin;
  actorRef: string;
  reasonCode: string | null;
  requestDigest: string;
  observedVersion: number | null;
  priorStatus: string | null;
  resultStatus: string | null;
  outcome: string;
  rejectionCode: string | null;
  requestedAt: string;
}
