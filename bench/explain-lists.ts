// EXPLAIN (ANALYZE, BUFFERS) of every statement the list read models send, with the
// filters the UI offers, and whether any plan scans a large table sequentially.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/keel_scale \
//     node --import tsx --conditions=react-server bench/explain-lists.ts [--only substring] [--repeat 3] \
//       [--json plans.json]
//
// The read models run against a pool that records each statement and its parameters;
// each recorded statement is then explained with the same parameters, `--repeat` times,
// and the run with the lowest execution time is printed (the machine is shared: the
// best of a few is the steadier figure). A metric sample is taken first, as the
// running server's sampler would have. Figures, not a test. `--json` also writes each
// statement's time and buffers, for bench/plan-growth.mjs to set two databases side by side.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createDatabase, STATEMENT_SETTINGS } from '../lib/db/client';
import { listExecutions } from '../lib/queries/executions';
import { readOverview } from '../lib/queries/overview';
import { sampleMetrics } from '../lib/workers/metric-sampler';
import { countCorruptEnvelopes } from '../lib/queries/corrupt-envelopes';
import { listRetryKeys } from '../lib/queries/retry-keys';
import { deadLetterGroups, listDeadLetterPage, listSettlementQueue } from '../lib/queries/settlements';
import { deadLetterFiltersSchema, queueFiltersSchema } from '../lib/queries/settlements-types';

const { values } = parseArgs({
  options: { only: { type: 'string' }, repeat: { type: 'string', default: '3' }, json: { type: 'string' } },
});
const repeat = Math.max(1, Number(values.repeat));
const LARGE = ['ob_job_execution', 'ob_step_execution', 'ob_job_instance', 'attempts', 'dead_letters', 'receipt_place'];
const url = process.env.DATABASE_URL;
if (!url) throw new Error('set DATABASE_URL to the loaded database');

const recorded: { text: string; values: unknown[] }[] = [];
// Planner estimates (EXPLAIN without ANALYZE) the read models ask for: planning only, counted per case.
let estimates = 0;
// As Keel's own pools (lib/db/client.ts): no JIT, no parallel workers.
const pool = new pg.Pool({ connectionString: url, max: 4, options: STATEMENT_SETTINGS });
const recording = new Proxy(pool, {
  get(target, name, receiver) {
    if (name !== 'query') return Reflect.get(target, name, receiver);
    return (query: string | { text: string; values?: unknown[] }, params?: unknown[]) => {
      const text = typeof query === 'string' ? query : query.text;
      if (/^\s*explain \(format json\)/i.test(text)) estimates += 1;
      // Reads only: a sample the overview takes on demand is written,
      // not explained (EXPLAIN ANALYZE would write it again).
      if (
        !/^\s*(begin|commit|rollback|set |select pg_advisory|explain)/i.test(text) &&
        !/insert into|delete from/i.test(text)
      ) {
        recorded.push({ text, values: params ?? (typeof query === 'string' ? [] : query.values) ?? [] });
      }
      return (target.query as (...args: unknown[]) => unknown)(query, params);
    };
  },
});
const db = createDatabase(recording);
const context = { staleThresholdMs: 900_000, ownerToken: Buffer.alloc(16) };
const queue = (q: Record<string, string>) => queueFiltersSchema.parse(q);
const dead = (q: Record<string, string>) => deadLetterFiltersSchema.parse(q);
// As the running server's sampler would have: the unfiltered views read its figures, and the
// corrupt-only walk the envelope verdicts its count kept. A sample taken within the interval the
// last one set is refused as recent (on a large database, up to about a minute), so the verdicts
// are kept here as the sample keeps them, by counting.
await sampleMetrics(db, { staleThresholdMs: context.staleThresholdMs });
await countCorruptEnvelopes(db);

const CASES: [string, () => Promise<unknown>][] = [
  ['overview', () => readOverview(db)],
  ['executions', () => listExecutions(db, {}, context)],
  ['executions status=FAILED', () => listExecutions(db, { status: 'FAILED' }, context)],
  ['executions stale=1', () => listExecutions(db, { stale: '1' }, context)],
  ['executions job=settle-invoices', () => listExecutions(db, { job: 'settle-invoices' }, context)],
  [
    'executions updated range',
    () =>
      listExecutions(
        db,
        {
          updatedFrom: new Date(Date.now() - 30 * 86_400_000).toISOString(),
          updatedTo: new Date(Date.now() - 20 * 86_400_000).toISOString(),
        },
        context,
      ),
  ],
  ['executions q=123456', () => listExecutions(db, { q: '123456' }, context)],
  ['retry keys', () => listRetryKeys(db, { only: 'keys', limit: 50 })],
  ['retry keys phase=read', () => listRetryKeys(db, { only: 'keys', phase: 'read', limit: 50 })],
  [
    'retry keys phase=write category=SERIALIZATION',
    () => listRetryKeys(db, { only: 'keys', phase: 'write', category: 'SERIALIZATION', limit: 50 }),
  ],
  ['retry keys category=TIMEOUT', () => listRetryKeys(db, { only: 'keys', category: 'TIMEOUT', limit: 50 })],
  ['retry keys job=import-ledger', () => listRetryKeys(db, { only: 'keys', job: 'import-ledger', limit: 50 })],
  ['retry keys corrupt', () => listRetryKeys(db, { only: 'corrupt', limit: 50 })],
  ['queue due', () => listSettlementQueue(db, queue({}))],
  ['queue leased', () => listSettlementQueue(db, queue({ state: 'leased' }))],
  ['queue leased reason=rpc', () => listSettlementQueue(db, queue({ state: 'leased', reason: 'rpc' }))],
  ['queue all reason=rpc', () => listSettlementQueue(db, queue({ state: 'all', reason: 'rpc' }))],
  ['queue minAttempts=3 minAge=30m', () => listSettlementQueue(db, queue({ minAttempts: '3', minAge: '30m' }))],
  ['queue q=rcpt_ab', () => listSettlementQueue(db, queue({ q: 'rcpt_ab' }))],
  // A sixteenth of the queue: past the page's 2,000 sorted matches and the counts' cap at either size,
  // so at 1M and at 10M alike each statement reads only up to its cap.
  ['queue q=rcpt_a', () => listSettlementQueue(db, queue({ q: 'rcpt_a' }))],
  ['queue maxAttempts=1', () => listSettlementQueue(db, queue({ maxAttempts: '1' }))],
  [
    'queue retry_scheduled maxAge=10m',
    () => listSettlementQueue(db, queue({ state: 'retry_scheduled', maxAge: '10m' })),
  ],
  ['dead letters', () => listDeadLetterPage(db, dead({}))],
  ['dead letters reason=rpc maxAge=2d', () => listDeadLetterPage(db, dead({ reason: 'rpc', maxAge: '2d' }))],
  ['dead letters minAttempts=5', () => listDeadLetterPage(db, dead({ minAttempts: '5' }))],
  ['dead letters q=rcpt_ab', () => listDeadLetterPage(db, dead({ q: 'rcpt_ab' }))],
  ['dead-letter groups', () => deadLetterGroups(db, dead({}))],
  ['dead-letter groups minAttempts=5', () => deadLetterGroups(db, dead({ minAttempts: '5' }))],
  ['dead-letter groups maxAge=2d', () => deadLetterGroups(db, dead({ maxAge: '2d' }))],
];

let sequential = 0;
let planned = 0;
/** Per statement: its case, its place in the case, the best execution time and the buffers its plan touched. */
const figures: { case: string; statement: number; ms: number; buffers: number }[] = [];
/** Shared buffers hit and read by the whole plan: its top node's `Buffers:` line, which sums its children. */
const planBuffers = (plan: string[]) => {
  const line = plan.find((l) => l.includes('Buffers: shared')) ?? '';
  const shared = /Buffers: shared((?: \w+=\d+)+)/.exec(line)?.[1] ?? '';
  return [...shared.matchAll(/ (hit|read)=(\d+)/g)].reduce((sum, m) => sum + Number(m[2]), 0);
};
for (const [name, read] of CASES.filter(([n]) => !values.only || n.includes(values.only))) {
  recorded.length = 0;
  estimates = 0;
  await read();
  const statements = [...recorded];
  process.stdout.write(`\n## ${name}: ${statements.length} statement(s) and ${estimates} planner estimate(s)\n`);
  for (const [i, statement] of statements.entries()) {
    let plan: string[] = [];
    let best = Infinity;
    for (let run = 0; run < repeat; run += 1) {
      const { rows } = await pool.query(`explain (analyze, buffers) ${statement.text}`, statement.values);
      const lines = rows.map((r) => r['QUERY PLAN'] as string);
      const ms = Number(/Execution Time: ([\d.]+)/.exec(lines.at(-1) ?? '')?.[1] ?? Infinity);
      if (ms < best) [best, plan] = [ms, lines];
    }
    // A sequential scan under a LIMIT that stops within the count cap (a capped count) reads at most 10,001 rows:
    // reported, not counted. One in a branch the run did not take (`never executed`)
    // is reported apart: it read nothing here, but runs when its case comes.
    const seqLines = plan.filter((line) => LARGE.some((t) => new RegExp(`Seq Scan on ${t}\\b`).test(line)));
    const untaken = seqLines.filter((line) => line.includes('(never executed)'));
    const seq = seqLines.filter(
      (line) =>
        !untaken.includes(line) &&
        (Number(/actual time=\S+ rows=(\d+)/.exec(line)?.[1] ?? Infinity) > 10_001 || /loops=[2-9]/.test(line)),
    );
    figures.push({ case: name, statement: i + 1, ms: best, buffers: planBuffers(plan) });
    sequential += seq.length;
    planned += untaken.length;
    const note = seq.length
      ? '  SEQUENTIAL SCAN OF A LARGE TABLE'
      : untaken.length
        ? '  (sequential scan planned in a branch this run did not take)'
        : seqLines.length
          ? '  (sequential scan stopped by the count cap)'
          : '';
    process.stdout.write(`\n### ${name} (statement ${i + 1} of ${statements.length})${note}\n`);
    process.stdout.write(`${statement.text.replace(/\s+/g, ' ').trim()}\n${plan.join('\n')}\n`);
  }
}
process.stdout.write(
  `\n${sequential} sequential scan(s) of a large table run; ${planned} more planned in branches not taken\n`,
);
if (values.json) writeFileSync(values.json, `${JSON.stringify(figures, null, 1)}\n`);
await pool.end();
