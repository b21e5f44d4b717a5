// A Keel webhook worker in a process of its own, for tests that restart it:
// DATABASE_URL and the KEEL_WEBHOOK_* settings come from the environment.
import { parseWebhookSettings } from '../../lib/config/webhooks';
import { createDatabase, createPool } from '../../lib/db/client';
import { startWebhookWorker } from '../../lib/workers/webhook-worker';

const errors: { name: string; message: string }[] = [];
const settings = parseWebhookSettings(process.env, errors);
if (errors.length > 0) throw new Error(errors.map((e) => e.message).join('; '));
const pool = createPool(process.env.DATABASE_URL!, 2);
const worker = startWebhookWorker({
  db: createDatabase(pool),
  settings,
  baseUrl: 'https://keel.example',
  log: (level, message, fields) => process.stdout.write(`${level} ${message} ${JSON.stringify(fields ?? {})}\n`),
});
process.on(
  'SIGTERM',
  () =>
    void worker
      .stop()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
