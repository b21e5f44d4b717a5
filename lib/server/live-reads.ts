import 'server-only';
import { randomBytes } from 'node:crypto';
import type { Actor } from '../domain/actor';
import type { LiveTopic } from '../domain/live-topics';
import { needsYouFor, type NeedsYouSnapshot, type NeedsYouView } from '../domain/needs-you';
import { logger } from '../observability/logger';
import { loggableError } from '../observability/safe-error';
import { singleton } from '../observability/singletons';
import { readNeedsYou } from '../queries/needs-you';
import { needsYouLinks } from '../url-state/needs-you';
import { runtime } from './composition-root';
import { liveEvents, type LiveEvents } from './live-events';
import { SESSION_RECHECK_MS } from './live-stream-sessions';
import { sharedListDb } from './read-source';
import { currentSessionToken } from './session';

/**
 * Reads shared by every open tab of this process (docs/performance.md#benchlive-readsmjs):
 * a live change is read once per instance, not once per tab.
 *
 * - The needs-you snapshot is read once per change of its topics and pushed to every open
 *   event stream, each cut to its reader (`NeedsYouFeed`).
 * - A list a tab refetches because of a live event (its request says so, lib/http/read-json.ts)
 *   is answered from the answer another tab's request got for the same list since the last
 *   change of the list's topics (`SharedReads`). Loading a page, a filter, an action's own
 *   refetch: those always read.
 */

/**
 * The topics each shared list reads; a route not listed here is never shared. Their answers do
 * not depend on who asks (the route has checked the permission), except where `perUser` says.
 */
export const SHARED_ROUTES: Readonly<Record<string, { topics: readonly LiveTopic[]; perUser?: boolean }>> = {
  '/api/overview': { topics: ['executions', 'proposals', 'settlements', 'metrics'] },
  '/api/executions': { topics: ['executions', 'proposals'] },
  '/api/retry-keys': { topics: ['executions'] },
  '/api/proposals': { topics: ['proposals'] },
  '/api/orchestrations': { topics: ['proposals'] },
  '/api/settlements/queue': { topics: ['settlements'] },
  '/api/settlements/dead-letters': { topics: ['settlements'] },
  '/api/settlements/dead-letters/groups': { topics: ['settlements'] },
  '/api/settlements/bulk-replays': { topics: ['settlements'] },
  '/api/rates': { topics: ['metrics', 'audit'] },
  // The audit read takes the reader into account: shared between one user's tabs only.
  '/api/audit': { topics: ['audit'], perUser: true },
};

/** The header a live refetch carries (lib/http/read-json.ts): the pass of the tab's event stream. */
export const LIVE_READ_HEADER = 'x-keel-live-read';

// A mark, not a class: Next.js may load this module once per route bundle, and instanceof would not see another's.
const PREPARED = Symbol.for('keel.prepared-json');

/** A JSON answer serialized once and sent as it is to every tab that asks for it. */
export interface PreparedJson {
  readonly [PREPARED]: true;
  readonly text: string;
}
const prepared = (text: string): PreparedJson => ({ [PREPARED]: true, text });
export const isPreparedJson = (value: unknown): value is PreparedJson =>
  typeof value === 'object' && value !== null && PREPARED in value;

const MAX_ENTRIES = 200;

export class SharedReads {
  private entries = new Map<string, { stamp: string; answer: Promise<unknown> }>();
  /** Reads made and answers reused, for the tests and the bench. */
  readonly counts = { reads: 0, reused: 0 };

  constructor(private readonly events: Pick<LiveEvents, 'stamp'>) {}

  /**
   * The answer for `key` at the current stamp of `topics`: the one already read (or being
   * read) since their last change, or `read()` now. Without a running listener, `read()`.
   */
  async answer(key: string, topics: readonly LiveTopic[], read: () => Promise<unknown>): Promise<unknown> {
    const stamp = this.events.stamp(topics);
    if (stamp === null) return read();
    const hit = this.entries.get(key);
    if (hit && hit.stamp === stamp) {
      this.counts.reused += 1;
      // Most recently used last, so the oldest goes first.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.answer.then(handOut);
    }
    this.counts.reads += 1;
    const answer = read().then((body) =>
      body instanceof Response || body === null ? body : prepared(JSON.stringify(body)),
    );
    this.entries.delete(key);
    this.entries.set(key, { stamp, answer });
    // A failed read is not kept: the next tab asks again.
    answer.catch(() => {
      if (this.entries.get(key)?.answer === answer) this.entries.delete(key);
    });
    while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return answer.then(handOut);
  }
}

// A Response's body is read once: every tab gets its own copy, and the kept one is never read.
const handOut = (answer: unknown) => (answer instanceof Response ? answer.clone() : answer);

/** The shared answer of a live refetch, or `read()` for any other request. */
export function sharedAnswer(request: Request, actor: Actor, read: () => Promise<unknown>): Promise<unknown> {
  if (!request.headers.get(LIVE_READ_HEADER)) return read();
  const url = new URL(request.url);
  const route = SHARED_ROUTES[url.pathname];
  if (!route) return read();
  url.searchParams.sort();
  const key = `${route.perUser ? actor.id : '*'} ${url.pathname}?${url.searchParams}`;
  return sharedReads().answer(key, route.topics, read);
}

/**
 * The passes of this process's open event streams. A stream's session is checked when it
 * opens and every 2 s after (lib/server/live-stream-sessions.ts), which ends the stream,
 * and its pass, once the session ends, its user is disabled or its role changes. A live
 * refetch of a shared list that shows its stream's pass, with that stream's session cookie,
 * is the stream's reader without reading the session again: a session is read per open tab,
 * not per read. A pass whose session has not been confirmed for PASS_FRESH_MS (the checks
 * failing) stands for no one, so its refetches read the session.
 */
export const PASS_FRESH_MS = 3 * SESSION_RECHECK_MS;

export class LiveReadPasses {
  private passes = new Map<string, { actor: Actor; sessionToken: string; confirmedAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /**
   * A new pass for a stream of `actor` on `sessionToken`: `confirm` after each check that
   * found the session as it was, `end` when the stream ends.
   */
  open(actor: Actor, sessionToken: string): { pass: string; confirm: () => void; end: () => void } {
    const pass = randomBytes(18).toString('base64url');
    const held = { actor, sessionToken, confirmedAt: this.now() };
    this.passes.set(pass, held);
    return {
      pass,
      confirm: () => {
        held.confirmedAt = this.now();
      },
      end: () => this.passes.delete(pass),
    };
  }

  /** The reader behind `pass`, when the request's session is the stream's and was lately confirmed; else null. */
  reader(pass: string | null, sessionToken: string | null): Actor | null {
    const held = pass ? this.passes.get(pass) : undefined;
    if (!held || sessionToken === null || held.sessionToken !== sessionToken) return null;
    return this.now() - held.confirmedAt <= PASS_FRESH_MS ? held.actor : null;
  }

  size(): number {
    return this.passes.size;
  }
}

export const liveReadPasses = (): LiveReadPasses => singleton('live-read-passes', () => new LiveReadPasses());

/**
 * The reader of a live refetch of a shared list that shows a valid pass, or null: then the
 * session is read. Checking the pass reads the session cookie only (no statement, unless the
 * cookie alone cannot name the session). Any other route always reads the session.
 */
export async function liveReadActor(request: Request): Promise<Actor | null> {
  const pass = request.headers.get(LIVE_READ_HEADER);
  if (!pass || !SHARED_ROUTES[new URL(request.url).pathname]) return null;
  return liveReadPasses().reader(pass, await currentSessionToken());
}

export const NEEDS_YOU_TOPICS: readonly LiveTopic[] = ['proposals', 'executions', 'metrics'];
// At most this often, however fast the runtime writes: one read per instance per change, coalesced.
const NEEDS_YOU_MIN_GAP_MS = 250;
// Severities follow the clock (a lapse turns 15 minutes old): a snapshot goes out at least this often.
const NEEDS_YOU_RESEND_MS = 15_000;

/**
 * The needs-you snapshot of this process: read once per change of its topics and handed
 * to every subscriber (each open event stream), whoever reads it.
 */
export class NeedsYouFeed {
  private snapshot: NeedsYouSnapshot | null = null;
  private snapshotStamp: string | null = null;
  private sentAt = 0;
  private reading: Promise<NeedsYouSnapshot> | null = null;
  private again = false;
  private listeners = new Set<(snapshot: NeedsYouSnapshot) => void>();
  private offEvents: (() => void) | null = null;
  readonly counts = { reads: 0 };

  constructor(
    private readonly events: Pick<LiveEvents, 'stamp' | 'subscribe'>,
    private readonly read: () => Promise<NeedsYouSnapshot>,
  ) {}

  /** The snapshot as of the last announced change: the shared one, or read now (once for concurrent callers). */
  current(): Promise<NeedsYouSnapshot> {
    const stamp = this.events.stamp(NEEDS_YOU_TOPICS);
    if (this.snapshot && stamp !== null && stamp === this.snapshotStamp) return Promise.resolve(this.snapshot);
    return this.refresh();
  }

  /** `listener` gets each new snapshot until the returned function is called. */
  subscribe(listener: (snapshot: NeedsYouSnapshot) => void): () => void {
    this.listeners.add(listener);
    this.offEvents ??= this.events.subscribe((topic) => {
      if (NEEDS_YOU_TOPICS.includes(topic)) this.changed();
    });
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      this.offEvents?.();
      this.offEvents = null;
    };
  }

  private changed(): void {
    if (this.reading) {
      this.again = true;
      return;
    }
    this.refresh().catch((error: unknown) =>
      logger.warn({ error: loggableError(error) }, 'needs you: the read failed; the next change reads again'),
    );
  }

  private refresh(): Promise<NeedsYouSnapshot> {
    if (this.reading) return this.reading;
    const stamp = this.events.stamp(NEEDS_YOU_TOPICS);
    const reading = (async () => {
      try {
        this.counts.reads += 1;
        const next = await this.read();
        const changed = !this.snapshot || withoutClock(next) !== withoutClock(this.snapshot);
        this.snapshot = next;
        this.snapshotStamp = stamp;
        if (changed || Date.now() - this.sentAt >= NEEDS_YOU_RESEND_MS) {
          this.sentAt = Date.now();
          for (const listener of this.listeners) listener(next);
        }
        return next;
      } finally {
        this.reading = null;
        if (this.again) {
          this.again = false;
          setTimeout(() => this.changed(), NEEDS_YOU_MIN_GAP_MS).unref?.();
        }
      }
    })();
    this.reading = reading;
    return reading;
  }
}

const withoutClock = (snapshot: NeedsYouSnapshot) => JSON.stringify({ ...snapshot, serverNow: null });

/** The process's live events, as the event stream opens them. */
export function processLiveEvents(): LiveEvents {
  const { settings, replica } = runtime();
  return liveEvents(
    settings.databaseUrl!,
    replica ? { monitor: replica.monitor, maxWaitMs: settings.readMaxLagMs } : null,
  );
}

export const sharedReads = (): SharedReads => singleton('shared-reads', () => new SharedReads(processLiveEvents()));

export const needsYouFeed = (): NeedsYouFeed =>
  singleton('needs-you-feed', () => {
    const { settings } = runtime();
    return new NeedsYouFeed(processLiveEvents(), () =>
      readNeedsYou(sharedListDb(), {
        staleThresholdMs: settings.staleThresholdMs,
        deadLetterThreshold: settings.webhooks.deadLetterThreshold,
        deadLetterWindowMs: settings.webhooks.deadLetterWindowMs,
      }),
    );
  });

/** What needs `actor`, from the process's shared snapshot. */
export function needsYouView(snapshot: NeedsYouSnapshot, actor: Actor): NeedsYouView {
  return needsYouFor(snapshot, actor, needsYouLinks, runtime().settings.docsUrl ?? null);
}

/** GET /api/needs-you and the pages' prefetch. */
export async function needsYouPage(actor: Actor): Promise<NeedsYouView> {
  return needsYouView(await needsYouFeed().current(), actor);
}
