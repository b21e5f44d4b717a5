#!/usr/bin/env node
import { runCommand } from '../lib/cli/commands';

// Exit explicitly: a dependency's exit hook would otherwise turn a refusal into exit code 0.
runCommand(process.argv.slice(2)).then(
  (code) => process.exit(code ?? 0),
  (error: unknown) => {
    process.stderr.write(`keel: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
