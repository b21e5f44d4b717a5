#!/usr/bin/env node
// Two runs of bench/explain-lists.ts side by side (`--json` of each): for every list
// statement, its time and the buffers its plan touched on the smaller database and on the
// larger, and their ratios. A statement whose buffers grow with the table is marked: with
// the larger database N times the smaller, an indexed page read stays near 1x, a count or
// walk over what a filter matches approaches Nx.
//
//   node bench/plan-growth.mjs plans-1m.json plans-10m.json [--flag 2]
//
// A figure-printing script, not a test: it asserts nothing and never runs in `npm test`.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { flag: { type: 'string', default: '2' } },
});
if (positionals.length !== 2) {
  process.stderr.write('usage: node bench/plan-growth.mjs smaller.json larger.json [--flag 2]\n');
  process.exit(2);
}
const [small, large] = positionals.map((file) => JSON.parse(readFileSync(file, 'utf8')));
const key = (row) => `${row.case} #${row.statement}`;
const larger = new Map(large.map((row) => [key(row), row]));
const flag = Number(values.flag);
const ratio = (a, b) => (a > 0 ? b / a : b > 0 ? Infinity : 1);
const fixed = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '∞');

process.stdout.write(
  '| statement | ms | ms larger | x | buffers | buffers larger | x |\n|---|---:|---:|---:|---:|---:|---:|\n',
);
let flagged = 0;
for (const row of small) {
  const other = larger.get(key(row));
  if (!other) continue;
  const buffersRatio = ratio(row.buffers, other.buffers);
  const grows = buffersRatio > flag;
  if (grows) flagged += 1;
  process.stdout.write(
    `| ${key(row)}${grows ? ' **grows**' : ''} | ${fixed(row.ms, 2)} | ${fixed(other.ms, 2)} ` +
      `| ${fixed(ratio(row.ms, other.ms), 2)} | ${row.buffers} | ${other.buffers} | ${fixed(buffersRatio, 2)} |\n`,
  );
}
process.stdout.write(
  `\n${flagged} of ${small.length} statements touch more than ${flag}x the buffers on the larger database\n`,
);
