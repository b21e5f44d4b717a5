import { randomUUID } from 'node:crypto';

/** The header carrying the id Keel's server gives each request; audit rows written by the auth surface name it. */
export const REQUEST_ID_HEADER = 'x-request-id';

/** Gives the request a fresh id, replacing any the client sent, so a client never chooses what audit rows record. */
export function stampRequestId(request: import('node:http').IncomingMessage): void {
  request.headers[REQUEST_ID_HEADER] = randomUUID();
}
