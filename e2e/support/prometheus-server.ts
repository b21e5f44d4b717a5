import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { freePort } from '../../lib/db/embedded';

/**
 * A real Prometheus server (Debian's `prometheus` package) on a loopback port of its own,
 * with its configuration and data in a temporary directory, loading docs/alerts.yml. It
 * scrapes Keel's /api/metrics with the scraper token, and its HTTP API tells which alerts
 * are pending or firing. `npm test` (scripts/check-alerts.sh) unpacks the package's binary
 * into .keel/tools when none is on PATH.
 */

const TOOLS_BINARY = resolve('.keel/tools/prometheus/usr/bin/prometheus');

function prometheusBinary(): string {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'prometheus');
    if (dir && existsSync(candidate)) return candidate;
  }
  if (existsSync(TOOLS_BINARY)) return TOOLS_BINARY;
  throw new Error(
    'prometheus is not installed: ' +
      "`bash scripts/check-alerts.sh` unpacks it from Debian's prometheus package into .keel/tools",
  );
}

export interface ScrapeJob {
  /** The job name the rules select (`keel`). */
  job: string;
  /** host:port of each Keel instance. */
  targets: string[];
  metricsToken: string;
}

export interface ActiveAlert {
  labels: Record<string, string> & { alertname: string };
  state: 'pending' | 'firing';
  value: string;
}

export interface PrometheusServer {
  url: string;
  /** Rewrites the scrape configuration and reloads it; resolves once the targets are the new ones. */
  reconfigure(job: ScrapeJob): Promise<void>;
  /** Every pending or firing alert, from /api/v1/alerts. */
  alerts(): Promise<ActiveAlert[]>;
  /** When the rule group was last evaluated, from /api/v1/rules. */
  lastEvaluation(): Promise<number>;
  /** An instant query's result vector. */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  stop(): Promise<void>;
}

// Short intervals so a test sees states within seconds; a scrape may take up to its interval.
const SCRAPE_INTERVAL = '3s';
const EVALUATION_INTERVAL = '1s';

// A job without targets is what service discovery that lost them leaves: Prometheus marks the
// old targets' series stale. (A job taken out of the configuration leaves its last samples
// visible for the 5-minute lookback instead.)
function configText(rules: string, job: ScrapeJob): string {
  const scrape = `
scrape_configs:
  - job_name: ${job.job}
    metrics_path: /api/metrics
    authorization:
      credentials: ${JSON.stringify(job.metricsToken)}
    static_configs: ${job.targets.length === 0 ? '[]' : `\n      - targets: ${JSON.stringify(job.targets)}`}
`;
  return `global:
  scrape_interval: ${SCRAPE_INTERVAL}
  scrape_timeout: ${SCRAPE_INTERVAL}
  evaluation_interval: ${EVALUATION_INTERVAL}
rule_files:
  - ${JSON.stringify(rules)}
${scrape}`;
}

async function api<T>(url: string, init?: RequestInit): Promise<T> {
  const response = await fetch(url, init);
  const body = (await response.json()) as { status: string; data: T; error?: string };
  if (!response.ok || body.status !== 'success')
    throw new Error(`prometheus ${url}: ${response.status} ${body.error ?? ''}`);
  return body.data;
}

/** Polls `read` until `done` holds of its result, or fails with `what` after `timeoutMs`. */
export async function until<T>(
  what: string,
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    try {
      last = await read();
      if (done(last)) return last;
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function startPrometheus(options: { rules: string; job: ScrapeJob }): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), 'keel-prometheus-'));
  const configFile = join(dir, 'prometheus.yml');
  const rules = resolve(options.rules);
  writeFileSync(configFile, configText(rules, options.job));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  mkdirSync('.keel/e2e-results', { recursive: true });
  const log = createWriteStream('.keel/e2e-results/prometheus.log');
  const server: ChildProcess = spawn(
    prometheusBinary(),
    [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // POST /-/reload, so a test can take a target away.
      '--web.enable-lifecycle',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  server.stdout?.pipe(log);
  server.stderr?.pipe(log);
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  const stop = async () => {
    if (server.exitCode === null && server.signalCode === null) {
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await until(
      'prometheus to be ready',
      async () =>
        server.exitCode === null
          ? (await fetch(`${url}/-/ready`)).ok
          : Promise.reject(new Error('prometheus exited, see .keel/e2e-results/prometheus.log')),
      Boolean,
      20_000,
    );
  } catch (error) {
    await stop();
    throw error;
  }

  const targets = async () =>
    (
      await api<{ activeTargets: { labels: Record<string, string> }[] }>(`${url}/api/v1/targets?state=active`)
    ).activeTargets
      .map((t) => `${t.labels.job}/${t.labels.instance}`)
      .sort();

  return {
    url,
    async reconfigure(job) {
      writeFileSync(configFile, configText(rules, job));
      const response = await fetch(`${url}/-/reload`, { method: 'POST' });
      if (!response.ok) throw new Error(`prometheus reload: ${response.status} ${await response.text()}`);
      const wanted = job.targets.map((t) => `${job.job}/${t}`).sort();
      await until('the new scrape targets', targets, (now) => JSON.stringify(now) === JSON.stringify(wanted));
    },
    async alerts() {
      return (await api<{ alerts: ActiveAlert[] }>(`${url}/api/v1/alerts`)).alerts;
    },
    async lastEvaluation() {
      const { groups } = await api<{ groups: { lastEvaluation: string }[] }>(`${url}/api/v1/rules?type=alert`);
      return Math.min(...groups.map((g) => Date.parse(g.lastEvaluation)));
    },
    async query(expr) {
      const data = await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
        `${url}/api/v1/query?query=${encodeURIComponent(expr)}`,
      );
      return data.result;
    },
    stop,
  };
}
