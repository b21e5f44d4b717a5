import pino from 'pino';
import { sanitizeLogArguments } from './log-sanitizer';

/**
 * Where log lines go: standard output (written synchronously, so nothing is lost at
 * exit). Tests point it at a capture with `redirectLogOutput` to scan what the server
 * would print.
 */
const output: { target: pino.DestinationStream; write(line: string): void } = {
  target: pino.destination({ fd: 1, sync: true }),
  write(line) {
    this.target.write(line);
  },
};

export function redirectLogOutput(target: pino.DestinationStream): () => void {
  const previous = output.target;
  output.target = target;
  return () => {
    output.target = previous;
  };
}

// The backstop for fields the sanitizer's key rule already removes at any depth.
const REDACTED_FIELDS = [
  'token',
  'sessionToken',
  'session_token',
  'ownerToken',
  'owner_token',
  'leaseToken',
  'retryKey',
  'retry_key',
  'receiptId',
  'receipt_id',
  'receiptIds',
  'checkpointKey',
  'password',
  'newPassword',
  'secret',
  'note',
  'notes',
  'userId',
  'user_id',
  'sessionId',
  'session_id',
  'cookie',
  'authorization',
  'params',
  'detail',
];

/**
 * Structured logs. Every call goes through sanitizeLogArguments first (the one
 * sanitizer): an error keeps only its class, SQLSTATE and constraint, text keeps its
 * first line, and tokens, cookies, authorization headers, passwords, session and user
 * ids, receipt ids, retry keys, the checkpoint key and notes are redacted at any depth.
 */
export const logger = pino(
  {
    level: process.env.KEEL_LOG_LEVEL ?? 'info',
    base: { service: 'keel' },
    hooks: {
      logMethod(args, method) {
        return method.apply(this, sanitizeLogArguments(args) as Parameters<typeof method>);
      },
    },
    redact: {
      paths: [
        ...REDACTED_FIELDS,
        ...REDACTED_FIELDS.map((field) => `*.${field}`),
        'headers.cookie',
        'headers.authorization',
        '*.headers.cookie',
        '*.headers.authorization',
        'headers["set-cookie"]',
      ],
      censor: '[redacted]',
    },
  },
  output,
);
