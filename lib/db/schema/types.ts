import { customType } from 'drizzle-orm/pg-core';

/**
 * PostgreSQL `bytea` as a Node `Buffer`. node-postgres already parses bytea into
 * a Buffer and sends a Buffer parameter as binary, so no mapping is needed.
 * Fixed lengths (digests, tokens) are CHECK constraints on each column.
 */
export const bytea = customType<{ data: Buffer; driverData: Buffer }>({
  dataType() {
    return 'bytea';
  },
});
