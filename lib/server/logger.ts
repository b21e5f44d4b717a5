import pino from 'pino';

/**
 * Structured logs. Retry keys, owner tokens, receipt ids and the checkpoint key are
 * never log fields; redaction is the backstop for anything that slips into one.
 */
export const logger = pino({
  level: process.env.KEEL_LOG_LEVEL ?? 'info',
  base: { service: 'keel' },
  redact: {
    paths: ['*.ownerToken', '*.owner_token', '*.retryKey', '*.receiptId', '*.receipt_id', '*.checkpointKey', '*.password', '*.token'],
    censor: '[redacted]',
  },
});
