import { loggableError } from '../observability/safe-error';

/**
 * What a background worker reports through. Fields are counts, ids of Keel's own rows
 * and error codes: never receipt ids, retry keys or lease tokens.
 */
export type WorkerLog = (
  level: 'info' | 'warn' | 'error',
  message: string,
  fields?: Record<string, string | number | boolean>,
) => void;

export interface RunningWorker {
  /** Stops scheduling, wakes a sleeping loop and resolves once the current step has finished. */
  stop(): Promise<void>;
}

/**
 * An error as worker log fields, through the one sanitizer (loggableError): class,
 * SQLSTATE and constraint. Driver messages can quote the values of the statement (a
 * receipt id in a trigger's message, a key in a violation).
 */
export function errorFields(error: unknown): Record<string, string> {
  const { name, cause, code, constraint } = loggableError(error);
  const fields: Record<string, string> = { error: cause ?? name };
  if (code) fields.code = code;
  if (constraint) fields.constraint = constraint;
  return fields;
}

/** How a loop waits between steps; it resolves early when `signal` aborts. Tests pass a clock they drive. */
export type WorkerWait = (delayMs: number, signal: AbortSignal) => Promise<void>;

const timerWait: WorkerWait = (delayMs, signal) =>
  new Promise<void>((resolve) => {
    const wake = () => {
      clearTimeout(timer);
      resolve();
    };
    // Each wait removes its own listener, so a long-running loop never piles them up.
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', wake);
      resolve();
    }, delayMs);
    timer.unref();
    signal.addEventListener('abort', wake, { once: true });
  });

/**
 * Runs `step` until stopped; `step` returns how long to wait before the next run (0 to
 * go on at once). A failing step is logged and retried after `errorDelayMs`. Timers are
 * unref'd so a worker never keeps a process alive on its own. With `announce`, logs
 * "<name> started" (with those fields) at once and "<name> stopped" once the last step has
 * finished; loops that report on their own (the demo runtime's many) leave it out.
 */
export function startWorkerLoop(options: {
  name: string;
  log: WorkerLog;
  step: () => Promise<number>;
  errorDelayMs: number;
  wait?: WorkerWait;
  announce?: Record<string, string | number | boolean>;
}): RunningWorker {
  const { name, log, step, errorDelayMs, wait = timerWait } = options;
  const { announce } = options;
  if (announce) log('info', `${name} started`, announce);
  const stopping = new AbortController();
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      let delayMs: number;
      try {
        delayMs = await step();
      } catch (error) {
        log('error', `${name} step failed`, errorFields(error));
        delayMs = errorDelayMs;
      }
      if (stopping.signal.aborted) break;
      if (delayMs <= 0) {
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      await wait(delayMs, stopping.signal);
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await loop;
      if (announce) log('info', `${name} stopped`);
    },
  };
}
