import type pg from 'pg';

/**
 * Everything Postgres knows about one schema's shape: relations, columns, defaults,
 * constraints, indexes, triggers, functions and grants, as sorted text lines.
 */
export async function catalogSnapshot(pool: pg.Pool, schema: string): Promise<string[]> {
  const { rows } = await pool.query<{ line: string }>(
    `
    with ns as (select oid from pg_namespace where nspname = $1)
    select 'relation ' || c.relname || ' ' || c.relkind::text || ' acl=' || coalesce(c.relacl::text, '') as line
      from pg_class c where c.relnamespace = (select oid from ns)
    union all
    select 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
           || ' notnull=' || a.attnotnull || ' default=' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
           || ' identity=' || a.attidentity::text
      from pg_attribute a
      join pg_class c on c.oid = a.attrelid
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
     where c.relnamespace = (select oid from ns) and a.attnum > 0 and not a.attisdropped
    union all
    select 'constraint ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
      from pg_constraint where connamespace = (select oid from ns)
    union all
    select 'index ' || indexdef from pg_indexes where schemaname = $1
    union all
    select 'trigger ' || tgrelid::regclass::text || ' ' || tgname from pg_trigger t
      join pg_class c on c.oid = t.tgrelid where c.relnamespace = (select oid from ns)
    union all
    select 'function ' || proname from pg_proc where pronamespace = (select oid from ns)
    union all
    select 'schema acl=' || coalesce(nspacl::text, '') || ' owner=' || nspowner::regrole::text from pg_namespace
    where nspname = $1
    order by 1`,
    [schema],
  );
  return rows.map((r) => r.line);
}
