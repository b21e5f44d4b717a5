import { defineConfig } from 'drizzle-kit';

// drizzle-kit manages Keel's own schemas only; oxide_batch belongs to the runtime
// and is created, when absent, from lib/db/bootstrap/oxide-batch.sql.
export default defineConfig({
  dialect: 'postgresql',
  schema: [
    './lib/db/schema/settle.ts',
    './lib/db/schema/keel.ts',
    './lib/db/schema/auth.ts',
    './lib/db/schema/webhooks.ts',
  ],
  out: './drizzle',
  schemaFilter: ['settle', 'keel'],
  migrations: { schema: 'keel', table: '__drizzle_migrations' },
  strict: true,
});
