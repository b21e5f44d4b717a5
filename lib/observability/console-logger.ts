import { format } from 'node:util';
import { logger } from './logger';
import { loggableError } from './safe-error';
import { sanitizeLogValue } from './log-sanitizer';
import { singleton } from './singletons';

// Once per process, whichever copy of this module asks.
const routing = () => singleton('console-routing', () => ({ routed: false }));
const LEVELS = { debug: 'debug', log: 'info', info: 'info', warn: 'warn', error: 'error', trace: 'debug' } as const;

/**
 * Sends the server process's console.* through pino and its sanitizer. Next.js prints
 * an error thrown while rendering with console.error, and libraries (better-auth's
 * default logger among them) print with console too; their errors quote a failed
 * query's parameters. After this, such a line keeps the text before its first
 * newline (and before any `params:`) and each error's class, SQLSTATE and constraint.
 */
export function routeConsoleToLogger(): () => void {
  const routed = routing();
  if (routed.routed) return () => {};
  routed.routed = true;
  let inside = false;
  const originals = new Map<keyof typeof LEVELS, (...args: unknown[]) => void>();
  for (const [method, level] of Object.entries(LEVELS)) {
    originals.set(method as keyof typeof LEVELS, console[method as keyof typeof LEVELS]);
    const original = console[method as keyof typeof LEVELS].bind(console);
    console[method as keyof typeof LEVELS] = (...args: unknown[]) => {
      // Should pino itself ever print through the console, do not loop.
      if (inside) return original(...args);
      inside = true;
      try {
        const errors = args.filter((arg): arg is Error => arg instanceof Error).map(loggableError);
        const values = args
          .filter((arg) => !(arg instanceof Error) && typeof arg === 'object' && arg !== null)
          .map((arg) => sanitizeLogValue(arg));
        // Only the text arguments make the message; format() applies their %s placeholders to text alone.
        const text = format(
          ...args.filter((arg) => typeof arg === 'string' || typeof arg === 'number' || typeof arg === 'boolean'),
        );
        logger[level](
          { console: method, ...(errors.length ? { errors } : {}), ...(values.length ? { values } : {}) },
          text || `console.${method}`,
        );
      } finally {
        inside = false;
      }
    };
  }
  // For tests: put the console back as it was.
  return () => {
    for (const [method, original] of originals) console[method] = original;
    routed.routed = false;
  };
}
