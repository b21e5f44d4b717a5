#!/usr/bin/env node
// Fails when a tracked source line is longer than the formatter's 120 columns (biome.jsonc).
// Biome wraps code but leaves comments and long strings alone; this catches those.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const LIMIT = 120;
const files = execFileSync(
  'git',
  ['ls-files', '-co', '--exclude-standard', '*.ts', '*.tsx', '*.js', '*.mjs', '*.cjs', '*.css'],
  {
    encoding: 'utf8',
  },
)
  .split('\n')
  .filter(Boolean);

const long = [];
for (const file of files) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue; // listed but deleted in the work tree
  }
  text.split('\n').forEach((line, index) => {
    if ([...line].length > LIMIT) long.push(`${file}:${index + 1}: ${[...line].length} columns`);
  });
}
if (long.length > 0) {
  console.error(`${long.length} lines are longer than ${LIMIT} columns:\n${long.join('\n')}`);
  process.exit(1);
}
console.log(`every line of ${files.length} source files is at most ${LIMIT} columns`);
