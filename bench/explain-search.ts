// EXPLAIN (ANALYZE, BUFFERS) of the statement search sends for one text of each kind,
// and whether any of its plans reads a table sequentially.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/keel_scale \
//     node --import tsx --conditions=react-server bench/explain-search.ts [--prepare] [--full]
//
// --prepare first adds the rows `keel load-scale` does not make (bench/search-samples.mjs).
// Searches as an admin (every kind, users too). Best of three runs per text; --full prints
// every plan, else one line per kind. Figures, not a test.
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createDatabase, STATEMENT_SETTINGS } from '../lib/db/client';
import { searchPlan } from '../lib/domain/search';
import { searchEverything } from '../lib/queries/search';
import { prepareSearchRows, searchSamples } from './search-samples.mjs';

const { values } = parseArgs({
  options: { prepare: { type: 'boolean', default: false }, full: { type: 'boolean', default: false } },
});
const url = process.env.DATABASE_URL;
if (!url) throw new Error('set DATABASE_URL to the loaded database');

const recorded: { text: string; values: unknown[] }[] = [];
const pool = new pg.Pool({ connectionString: url, max: 2, options: STATEMENT_SETTINGS });
const recording = new Proxy(pool, {
  get(target, name, receiver) {
    if (name !== 'query') return Reflect.get(target, name, receiver);
    return (query: string | { text: string; values?: unknown[] }, params?: unknown[]) => {
      const text = typeof query === 'string' ? query : query.text;
      if (/union all/i.test(text))
        recorded.push({ text, values: params ?? (typeof query === 'string' ? [] : query.values) ?? [] });
      return (target.query as (...args: unknown[]) => unknown)(query, params);
    };
  },
});
const db = createDatabase(recording);

const client = await pool.connect();
if (values.prepare)
  process.stderr.write(`bench rows added to: ${(await prepareSearchRows(client)).join(', ') || 'none (all there)'}\n`);
const samples = await searchSamples(client, { count: 1 });
client.release();

let sequential = 0;
for (const [kind, [text]] of Object.entries(samples)) {
  recorded.length = 0;
  const results = await searchEverything(db, text!, searchPlan(text!, 'admin'));
  const statement = recorded[0]!;
  let best: { ms: number; plan: string } | null = null;
  for (let run = 0; run < 3; run += 1) {
    const explained = await pool.query(`explain (analyze, buffers) ${statement.text}`, statement.values);
    const plan = explained.rows.map((r) => r['QUERY PLAN'] as string).join('\n');
    const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN);
    if (!best || ms < best.ms) best = { ms, plan };
  }
  const scans = [...best!.plan.matchAll(/Seq Scan on (\S+)/g)].map((m) => m[1]);
  const indexes = [
    ...new Set(
      [
        ...best!.plan.matchAll(/(?:Index Scan|Index Only Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) (\S+)/g),
      ].map((m) => m[1]),
    ),
  ];
  sequential += scans.length;
  const hits = results.groups.map((g) => `${g.kind} ${g.hits.length}${g.more ? '+' : ''}`).join(', ') || 'none';
  console.log(
    `${kind.padEnd(26)} ${best!.ms.toFixed(2).padStart(7)} ms  hits: ${hits}  seq scans: ${scans.join(', ') || 'none'}`,
  );
  console.log(`${''.padEnd(26)} indexes: ${indexes.join(', ')}`);
  if (values.full) console.log(`${best!.plan}\n`);
}
console.log(`\n${sequential} sequential scans`);
await pool.end();
