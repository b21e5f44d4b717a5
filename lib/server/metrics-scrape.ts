import 'server-only';
import { Registry } from 'prom-client';
import type { DbOrTx } from '../db/client';
import { logger } from '../observability/logger';
import {
  registerAlertGauges,
  registerAlertSettings,
  registerProcessCount,
  registerReplicaGauges,
  registerSampledGauges,
} from '../observability/metric-catalogue';
import { serverCounters } from '../observability/metrics';
import { loggableError } from '../observability/safe-error';
import { readAlertGauges } from '../queries/alert-gauges';
import { readLastSample, type LastSample } from '../queries/last-sample';
import { sampleMetrics } from '../workers/metric-sampler';
import type { ReplicaState } from './read-replica';

/**
 * The metric sampler's last sample, as the overview page reads it: taken now when older
 * than two intervals. A sample that fails (or that another process is taking) leaves the
 * last one, whose age the scrape reports, so a scrape answers whenever the database does.
 */
async function currentSample(db: DbOrTx, staleThresholdMs: number): Promise<LastSample> {
  const sample = await readLastSample(db);
  if (sample.fresh) return sample;
  try {
    await sampleMetrics(db, { staleThresholdMs });
  } catch (error) {
    logger.warn({ error: loggableError(error) }, 'metrics: the sample failed; this scrape reports the last one');
    return sample;
  }
  return readLastSample(db);
}

/** The settings /api/metrics reports beside the figures, for the alerting rules to compare with. */
export interface MetricSettings {
  deadLetterThreshold: number;
}

/**
 * The exposition text: gauges from the database (the sampler's figures, as on the overview
 * page, and the alerting figures read now), then this server's counters and histograms.
 */
export async function renderMetrics(
  db: DbOrTx,
  staleThresholdMs: number,
  replica: ReplicaState | null = null,
  settings: MetricSettings | null = null,
): Promise<{ contentType: string; body: string }> {
  const [sample, alerting] = await Promise.all([currentSample(db, staleThresholdMs), readAlertGauges(db)]);
  const scrape = new Registry();
  registerSampledGauges(scrape, sample);
  registerAlertGauges(scrape, alerting);
  if (settings) registerAlertSettings(scrape, settings);
  if (replica) registerReplicaGauges(scrape, replica);

  const counted = await serverCounters();
  registerProcessCount(scrape, counted.processes);

  const merged = Registry.merge([scrape, counted.registry]);
  return { contentType: merged.contentType, body: await merged.metrics() };
}
