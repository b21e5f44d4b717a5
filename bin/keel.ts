#!/usr/bin/env node
import { runCommand } from '../lib/cli/commands';
import { describeForLog } from '../lib/observability/log-sanitizer';

// Exit explicitly: a dependency's exit hook would otherwise turn a refusal into exit code 0.
runCommand(process.argv.slice(2)).then(
  (code) => process.exit(code ?? 0),
  (error: unknown) => {
    process.stderr.write(`keel: ${describeForLog(error)}\n`);
    process.exit(1);
  },
);
