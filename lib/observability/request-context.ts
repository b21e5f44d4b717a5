import 'server-only';
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/**
 * The request id of the work in progress: an action's, a read's, or a worker's job.
 * The audit log reads it, so every audit event names the request that wrote it
 * without each service passing it down.
 */
const storage = new AsyncLocalStorage<{ requestId: string }>();

export function withRequestId<T>(requestId: string, work: () => Promise<T>): Promise<T> {
  return storage.run({ requestId }, work);
}

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/** The current request id, or a fresh one for work that runs outside any request. */
export function requestIdOrNew(): string {
  return currentRequestId() ?? randomUUID();
}
