import { createHmac } from 'node:crypto';

/**
 * The owner token of a seeded execution that was live when the demo data was seeded.
 * The demo runtime plays the process that owns it and derives the same token to carry
 * the execution on (lib/demo/runtime/seeded-executions.ts). Derived under the checkpoint
 * key, so it is exactly as secret as that key, and it never leaves the server.
 */
export function seededOwnerToken(checkpointKey: Buffer, executionId: number): Buffer {
  return createHmac('sha256', checkpointKey).update(`keel-demo-seeded-owner:${executionId}`).digest().subarray(0, 16);
}
