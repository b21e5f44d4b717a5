import { sql, type SQL } from 'drizzle-orm';
import type { OwnerObservation } from '../../domain/batch-status';

/**
 * How an execution's owner token compares with this process's (OWNER_OBSERVATIONS in
 * lib/domain/batch-status.ts). The token is compared here, in SQL, so its bytes are
 * never selected and cannot reach a result, a log or a page.
 */
export function ownerObservation(ownerTokenColumn: SQL, ownerToken: Buffer | Uint8Array): SQL<OwnerObservation> {
  return sql<OwnerObservation>`case when ${ownerTokenColumn} is null then 'ABSENT'
    when ${ownerTokenColumn} = ${Buffer.from(ownerToken)} then 'CURRENT_PROCESS'
    else 'OTHER_PROCESS' end`;
}
