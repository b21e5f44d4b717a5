import pg from 'pg';
import { createDatabase } from '../lib/db/client';
import { retryKeyStepsQuery } from '../lib/queries/retry-keys';
import { PgDialect } from 'drizzle-orm/pg-core';
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 2 });
const q = new PgDialect().sqlToQuery(retryKeyStepsQuery(null, { only: 'corrupt' }, 1000));
const r = await pool.query(`explain (analyze, buffers) ${q.sql}`, q.params);
console.log(r.rows.map((x) => x['QUERY PLAN']).join('\n'));
await pool.end();
