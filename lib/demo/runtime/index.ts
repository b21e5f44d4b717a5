import type { DemoDriver, DemoRuntimeContext } from './driver';
import { batchExecutionsDriver } from './batch-executions';
import type { BatchDemoOptions } from './batch-options';
import { orchestrationsDriver, type OrchestrationDemoOptions } from './orchestrations';
import { runtimeOpsDriver, type RuntimeOpsOptions } from './runtime-ops';
import { seededExecutionsDriver, type SeededExecutionsOptions } from './seeded-executions';
import { settlementWorkersDriver, type SettlementDemoOptions } from './settlement-workers';
import { supportDeskDriver, type SupportDeskOptions } from './support-desk';

export type { DemoDriver, DemoRuntimeContext } from './driver';

export interface DemoDriverOptions {
  settlement?: Partial<SettlementDemoOptions>;
  batch?: Partial<BatchDemoOptions>;
  orchestration?: Partial<OrchestrationDemoOptions>;
  seeded?: Partial<SeededExecutionsOptions>;
  runtimeOps?: Partial<RuntimeOpsOptions>;
  support?: Partial<SupportDeskOptions>;
}

/** Every driver, each with its defaults unless overridden (a test shortens the rare fates). */
export function demoDrivers(options: DemoDriverOptions = {}): DemoDriver[] {
  return [
    settlementWorkersDriver(options.settlement),
    batchExecutionsDriver(options.batch),
    orchestrationsDriver(options.orchestration),
    seededExecutionsDriver(options.seeded),
    runtimeOpsDriver(options.runtimeOps),
    supportDeskDriver(options.support),
  ];
}

/**
 * The drivers the demo runtime runs (docs/design.md#demo-mode): settlement workers claim and record
 * outcomes, with an RPC outage now and then; batch workers launch and advance executions,
 * reserve retries, and now and then go silent or leave an execution UNKNOWN;
 * orchestrators renew checkpoint leases and let a few lapse; the executions live at
 * seeding are carried on and finished. And the people around them: the runtime's
 * operators recover executions stale for half an hour with the runtime's own CLI, and
 * the support person works new dead letters through Keel. Together they hold a steady
 * state: stale executions and dead letters come and go instead of piling up.
 */
export const DEMO_DRIVERS: readonly DemoDriver[] = demoDrivers();

export interface DemoRuntime {
  stop(): Promise<void>;
}

/** Starts every driver; `stop` stops them all and waits for their in-flight steps. */
export function startDemoRuntime(options: DemoRuntimeContext & { drivers?: readonly DemoDriver[] }): DemoRuntime {
  const { drivers = DEMO_DRIVERS, ...context } = options;
  const running = drivers.map((driver) => ({ name: driver.name, worker: driver.start(context) }));
  context.log('info', 'demo runtime started', { drivers: running.map((r) => r.name).join(',') });
  let stopping: Promise<void> | null = null;
  return {
    stop() {
      stopping ??= Promise.all(running.map((r) => r.worker.stop())).then(() => {
        context.log('info', 'demo runtime stopped');
      });
      return stopping;
    },
  };
}
