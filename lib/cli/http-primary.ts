import cluster, { type Worker } from 'node:cluster';
import {
  HTTP_PROCESS_MESSAGES as M,
  type CollectedMetrics,
  type HttpProcessMessage,
} from '../observability/http-process-messages';

/**
 * The parent of several HTTP processes on one port (KEEL_HTTP_PROCESSES > 1): Node's
 * cluster hands each new connection to the next process. The parent serves nothing
 * itself; it starts the processes, starts a replacement when one dies, relays the
 * metrics every process must report together, and stops them all on a signal.
 * Process 0 also runs the background work (lib/server/composition-root.ts).
 */
export interface HttpPrimaryOptions {
  processes: number;
  /** KEEL_INSTANCE_ID as given, or undefined (each process then names itself by host and pid). */
  instanceId: string | undefined;
  /** Whether `keel start` launched this parent: then it exits when the launcher is gone. */
  launched: boolean;
  log: (line: string) => void;
}

/** A process that dies within this long of its start counts as a crash loop step. */
const QUICK_EXIT_MS = 10_000;
const MAX_RESTART_DELAY_MS = 30_000;
/** How long a metrics request waits for every process's answer. */
const COLLECT_TIMEOUT_MS = 3_000;
const STOP_GRACE_MS = 10_000;

/** The name the index-th process works bulk jobs under, when the operator named the instance. */
export function processInstanceId(instanceId: string | undefined, index: number): string | undefined {
  return instanceId === undefined ? undefined : `${instanceId}-${index + 1}`;
}

export function runHttpPrimary(options: HttpPrimaryOptions): void {
  const { processes, log } = options;
  const byIndex = new Map<number, { worker: Worker; startedAt: number; quickExits: number }>();
  const collecting = new Map<
    string,
    { requester: Worker; requestId: string; waiting: Set<number>; metrics: CollectedMetrics[]; timer: NodeJS.Timeout }
  >();
  let stopping = false;
  let nextCollect = 0;

  const start = (index: number, quickExits: number) => {
    const env: Record<string, string> = { KEEL_HTTP_PROCESS_INDEX: String(index) };
    const name = processInstanceId(options.instanceId, index);
    if (name !== undefined) env.KEEL_INSTANCE_ID = name;
    const worker = cluster.fork(env);
    byIndex.set(index, { worker, startedAt: Date.now(), quickExits });
    worker.on('message', (message: HttpProcessMessage) => onMessage(worker, message));
    worker.once('exit', (code, signal) => {
      const entry = byIndex.get(index);
      if (entry?.worker !== worker) return;
      byIndex.delete(index);
      for (const [id, pending] of collecting) if (pending.waiting.delete(worker.id)) finishIfDone(id);
      // A process that exits cleanly was told to stop (a signal to the whole process group, as
      // Ctrl-C sends): it is not replaced, and the parent goes once none is left.
      if (stopping || (code === 0 && signal === null)) {
        if (byIndex.size === 0) process.exit(0);
        return;
      }
      const quick = Date.now() - entry.startedAt < QUICK_EXIT_MS;
      const exits = quick ? entry.quickExits + 1 : 0;
      const delay = exits === 0 ? 0 : Math.min(MAX_RESTART_DELAY_MS, 500 * 2 ** (exits - 1));
      log(
        `HTTP process ${index} exited (${signal ?? `code ${code}`}); starting another${delay ? ` in ${delay} ms` : ''}`,
      );
      setTimeout(() => {
        if (!stopping) start(index, exits);
      }, delay);
    });
  };

  const finishIfDone = (collectId: string) => {
    const pending = collecting.get(collectId);
    if (!pending || pending.waiting.size > 0) return;
    clearTimeout(pending.timer);
    collecting.delete(collectId);
    if (pending.requester.isConnected()) {
      pending.requester.send({
        type: M.aggregate,
        requestId: pending.requestId,
        metrics: pending.metrics,
        processes: pending.metrics.length,
      } satisfies HttpProcessMessage);
    }
  };

  const onMessage = (worker: Worker, message: HttpProcessMessage) => {
    if (message?.type === M.request) {
      const collectId = String(nextCollect++);
      const waiting = new Set<number>();
      for (const { worker: w } of byIndex.values()) {
        if (!w.isConnected()) continue;
        waiting.add(w.id);
        w.send({ type: M.collect, collectId } satisfies HttpProcessMessage);
      }
      // A process that does not answer in time is left out of this scrape, not waited on.
      const timer = setTimeout(() => {
        const pending = collecting.get(collectId);
        if (pending) {
          pending.waiting.clear();
          finishIfDone(collectId);
        }
      }, COLLECT_TIMEOUT_MS);
      collecting.set(collectId, { requester: worker, requestId: message.requestId, waiting, metrics: [], timer });
      finishIfDone(collectId);
    } else if (message?.type === M.collected) {
      const pending = collecting.get(message.collectId);
      if (!pending?.waiting.delete(worker.id)) return;
      pending.metrics.push(message.metrics);
      finishIfDone(message.collectId);
    }
  };

  const stop = () => {
    if (stopping) return;
    stopping = true;
    if (byIndex.size === 0) process.exit(0);
    for (const { worker } of byIndex.values()) worker.process.kill('SIGTERM');
    setTimeout(() => {
      for (const { worker } of byIndex.values()) worker.process.kill('SIGKILL');
      process.exit(0);
    }, STOP_GRACE_MS).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (options.launched) {
    // As lib/server/composition-root.ts does for a single process: no lingering once the launcher is gone.
    const parent = process.ppid;
    setInterval(() => {
      if (process.ppid !== parent) stop();
    }, 1_000).unref();
  }

  for (let index = 0; index < processes; index += 1) start(index, 0);
  log(`${processes} HTTP processes on one port`);
}
