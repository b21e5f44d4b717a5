import { loggableError } from '../server/safe-error';

/**
 * What a background worker reports through. Fields are counts, ids of Keel's own rows
 * and error codes: never receipt ids, retry keys or lease tokens.
 */
export type WorkerLog = (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, string | number | boolean>) => void;

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

/**
 * Runs `step` until stopped; `step` returns how long to wait before the next run (0 to
 * go on at once). A failing step is logged and retried after `errorDelayMs`. Timers are
 * unref'd so a worker never keeps a process alive on its own.
 */
export function startWorkerLoop(options: {
  name: string;
  log: WorkerLog;
  step: () => Promise<number>;
  errorDelayMs: number;
}): RunningWorker {
  const { name, log, step, errorDelayMs } = options;
  let stopped = false;
  let wake: (() => void) | null = null;
  let timer: NodeJS.Timeout | null = null;
  const loop = (async () => {
    while (!stopped) {
      let delayMs: number;
      try {
        delayMs = await step();
      } catch (error) {
        log('error', `${name} step failed`, errorFields(error));
        delayMs = errorDelayMs;
      }
      if (stopped) break;
      if (delayMs <= 0) {
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, delayMs);
        timer.unref();
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}
