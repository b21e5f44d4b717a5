// Sums the JSON reports of the three tiers into one closing line.
import { readFileSync } from 'node:fs';

let passed = 0;
let failed = 0;
let skipped = 0;
let flaky = 0;
for (const file of process.argv.slice(2)) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  if ('numPassedTests' in report) {
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  } else {
    passed += report.stats.expected + report.stats.flaky;
    failed += report.stats.unexpected;
    flaky += report.stats.flaky;
    skipped += report.stats.skipped;
  }
}
if (flaky > 0) console.log(`[test] ${flaky} end-to-end test(s) passed only on their retry (flaky): see the list above`);
console.log(`Summary: ${passed} passed, ${failed} failed, ${skipped} skipped`);
if (failed > 0 || passed === 0) process.exit(1);
