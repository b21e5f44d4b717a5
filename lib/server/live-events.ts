import 'server-only';
import { singleton } from '../observability/singletons';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { topicOfTable, type LiveTopic } from '../domain/live-topics';
import { logger } from '../observability/logger';
import { recordLiveEventFailure } from '../observability/metrics';
import { parseLsn } from '../domain/lsn';
import type { ReplicaMonitor } from './read-replica';
import { loggableError } from '../observability/safe-error';
import { createStreamSessionWatch, type StreamSessionWatch } from './live-stream-sessions';
import { runtime } from './composition-root';

/**
 * One listener per server process: LISTEN keel_events for Keel's own tables, and a
 * half-second poll of the runtime's executions (which Keel never adds triggers to) and
 * of the settlement queue (too hot for NOTIFY), fanned out to every open SSE stream as
 * topics of lib/domain/live-topics.ts.
 */
export const LIVE_CHANNEL = 'keel_events';
const POLL_MS = 500;
const REPLAY_POLL_MS = 25;
const RUNTIME_TOPIC: LiveTopic = 'executions';
const QUEUE_TOPIC: LiveTopic = 'settlements';
const ANNOUNCE_GAP_MS = 1_000;

// Each status's newest updated_at, read from the runtime's (status, updated_at, id)
// index: any status change or heartbeat moves one of them. The queue's mark is the newest
// history event (every outcome, replay, requeue and discard writes one) and the newest
// lease grant (every claim that takes a row writes one), each the end of its primary key.
const RUNTIME_FINGERPRINT = `
  select string_agg(s.status || '=' || coalesce((
           select max(e.updated_at)::text from oxide_batch.ob_job_execution e where e.status = s.status), ''), ','
           order by s.status) as fp,
         concat((select max(id) from keel.settlement_event), ':', (select max(id) from settle.lease_grants)) as queue
  from unnest(array['STARTING','STARTED','STOPPING','STOPPED','FAILED','COMPLETED','ABANDONED','UNKNOWN']) as
  s(status)`;

export class LiveEvents extends EventEmitter {
  private client: pg.Client | null = null;
  private poll: NodeJS.Timeout | null = null;
  private fingerprint: string | null = null;
  private queueMark: string | null = null;
  private starting: Promise<void> | null = null;
  // Bumped by stop(), so a start that finishes after a stop closes its connection instead of running unseen.
  private generation = 0;

  private pending = new Set<LiveTopic>();
  private publishing = false;

  /**
   * `replica`, when lists read from one: a change is announced only once the replica
   * has replayed it (or stopped being used), so a page that refetches on the event
   * never reads an older list than the change it was told about.
   */
  constructor(
    private readonly databaseUrl: string,
    private readonly replica: ReplicaGate | null = null,
  ) {
    super();
    this.setMaxListeners(0);
  }

  // Changes announced per topic since the listener started: what a shared read was read at (lib/server/live-reads.ts).
  private versions = new Map<LiveTopic, number>();
  private announcedAt = new Map<LiveTopic, number>();
  private trailing = new Map<LiveTopic, NodeJS.Timeout>();

  /**
   * A topic is announced at once, then at most once a second while it keeps changing (the
   * changes meanwhile in one announcement at the end of the second): every open tab refetches
   * at the same moments, so each shared read serves them all, as the tabs' own once-a-second
   * refetch would have it anyway (components/live/live-updates.tsx).
   */
  private announce(topic: LiveTopic): void {
    const wait = (this.announcedAt.get(topic) ?? Number.NEGATIVE_INFINITY) + ANNOUNCE_GAP_MS - Date.now();
    if (wait > 0) {
      if (!this.trailing.has(topic)) {
        const timer = setTimeout(() => {
          this.trailing.delete(topic);
          this.announce(topic);
        }, wait);
        timer.unref();
        this.trailing.set(topic, timer);
      }
      return;
    }
    this.announcedAt.set(topic, Date.now());
    this.versions.set(topic, (this.versions.get(topic) ?? 0) + 1);
    this.emit('change', topic);
  }

  /**
   * Where the topics stand: equal stamps mean no change to them was announced between the
   * two readings. Null while the listener is not running, when changes go unseen.
   */
  stamp(topics: readonly LiveTopic[]): string | null {
    if (!this.client || !this.poll) return null;
    return `${this.generation}:${topics.map((t) => this.versions.get(t) ?? 0).join(',')}`;
  }

  private publish(topic: LiveTopic): void {
    if (!this.replica) {
      this.announce(topic);
      return;
    }
    this.pending.add(topic);
    if (!this.publishing) void this.publishWhenReplayed();
  }

  private async publishWhenReplayed(): Promise<void> {
    this.publishing = true;
    try {
      while (this.pending.size > 0) {
        const topics = [...this.pending];
        this.pending.clear();
        await this.replayed();
        for (const topic of topics) this.announce(topic);
      }
    } finally {
      this.publishing = false;
    }
  }

  /** Waits until the replica has the primary's current position, for at most its tolerated lag. */
  private async replayed(): Promise<void> {
    const gate = this.replica;
    const client = this.client;
    if (!gate || !client || !gate.monitor.state().usable) return;
    let lsn: bigint;
    try {
      lsn = parseLsn((await client.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn')).rows[0]!.lsn);
    } catch {
      return;
    }
    const deadline = performance.now() + gate.maxWaitMs;
    while (gate.monitor.state().usable && !(await gate.monitor.caughtUpTo(lsn)) && performance.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, REPLAY_POLL_MS));
    }
  }

  /** Resolves once the listener is connected and the polled baselines are taken. */
  ready(): Promise<void> {
    return this.ensureStarted();
  }

  subscribe(listener: (topic: LiveTopic) => void): () => void {
    this.on('change', listener);
    void this.ensureStarted();
    return () => {
      this.off('change', listener);
      if (this.listenerCount('change') === 0) this.stop();
    };
  }

  private ensureStarted(): Promise<void> {
    this.starting ??= this.start().catch((error: unknown) => {
      recordLiveEventFailure();
      logger.warn({ error: loggableError(error) }, 'live events unavailable; pages fall back to polling');
      this.starting = null;
    });
    return this.starting;
  }

  private async start(): Promise<void> {
    const generation = this.generation;
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'keel-live' });
    // Only the current connection may restart the listener: a closed one's late errors must not stop its successor.
    client.on('error', () => {
      if (this.client === client) this.restart();
    });
    client.on('notification', (message) => {
      const topic = message.channel === LIVE_CHANNEL && message.payload ? topicOfTable(message.payload) : null;
      if (topic) this.publish(topic);
    });
    await client.connect();
    await client.query(`LISTEN ${LIVE_CHANNEL}`);
    if (generation !== this.generation) {
      await client.end();
      return;
    }
    this.client = client;
    // Take the baselines now, so a change right after a page connects is not mistaken for one.
    await this.pollRuntime();
    this.poll = setInterval(() => void this.pollRuntime(), POLL_MS);
  }

  private async pollRuntime(): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const { rows } = await client.query<{ fp: string; queue: string | null }>(RUNTIME_FINGERPRINT);
      if (this.client !== client) return; // stopped meanwhile: this reading belongs to no one
      const next = rows[0]?.fp ?? '';
      const queue = rows[0]?.queue ?? '';
      if (this.fingerprint !== null && next !== this.fingerprint) this.publish(RUNTIME_TOPIC);
      if (this.queueMark !== null && queue !== this.queueMark) this.publish(QUEUE_TOPIC);
      this.fingerprint = next;
      this.queueMark = queue;
    } catch {
      if (this.client === client) this.restart();
    }
  }

  private restart(): void {
    recordLiveEventFailure();
    this.stop();
    if (this.listenerCount('change') > 0) setTimeout(() => void this.ensureStarted(), 2_000).unref();
  }

  private stop(): void {
    this.generation += 1;
    for (const timer of this.trailing.values()) clearTimeout(timer);
    this.trailing.clear();
    if (this.poll) clearInterval(this.poll);
    this.poll = null;
    const client = this.client;
    this.client = null;
    this.starting = null;
    this.fingerprint = null;
    this.queueMark = null;
    void client?.end().catch(() => {});
  }
}

/** The replica lists read from, and how long an event may wait for it to replay a change. */
export interface ReplicaGate {
  monitor: Pick<ReplicaMonitor, 'state' | 'caughtUpTo'>;
  maxWaitMs: number;
}

export function liveEvents(databaseUrl: string, replica: ReplicaGate | null = null): LiveEvents {
  return singleton('live-events', () => new LiveEvents(databaseUrl, replica));
}

/** The process's watch over the sessions of its open event streams (one statement per check for all of them). */
export function streamSessionWatch(): StreamSessionWatch {
  return singleton('stream-session-watch', () =>
    createStreamSessionWatch(runtime().pool, {
      onError: (error) =>
        logger.warn(
          { error: loggableError(error) },
          'event streams: session check failed; streams stay open until the next',
        ),
    }),
  );
}
