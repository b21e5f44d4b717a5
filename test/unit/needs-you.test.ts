import { describe, expect, it } from 'vitest';
import { rowsDiffering } from '../../components/ui/calm-rows';
import {
  formatChange,
  type NeedsYouLinks,
  type NeedsYouSnapshot,
  needsYouFor,
  sectionsFor,
} from '../../lib/domain/needs-you';
import { ROLES } from '../../lib/domain/roles';

const NOW = Date.parse('2026-12-03T12:00:00Z');
const at = (offsetMs: number) => new Date(NOW + offsetMs).toISOString();
const MIN = 60_000;

const links: NeedsYouLinks = {
  pending: '/recovery?status=PENDING',
  proposal: (id) => `/recovery/${id}`,
  staleBetween: (from, to) => `/executions?stale=1&from=${from.toISOString()}&to=${to.toISOString()}`,
  corrupt: '/retry-keys?show=corrupt',
  leases: '/recovery#orchestrations',
  deadLetters: (reason) => `/settlements/dead-letters?reason=${reason}`,
};

const quiet: NeedsYouSnapshot = {
  serverNow: at(0),
  staleThresholdMs: 10 * MIN,
  pending: [],
  pendingCount: 0,
  pendingHourAgo: 0,
  stale: { lastHour: 0, hourBefore: 0, oldestUpdatedAt: null },
  corrupt: { now: 4, hourAgo: 4 },
  lapsed: { count: 0, hourAgo: 0, oldestExpiredAt: null },
  deadLetters: [{ reason: 'rpc', lastHour: 3, hourBefore: 3, window: 1 }],
  deadLetterThreshold: 50,
  deadLetterWindowMs: 15 * MIN,
};

const proposal = (id: number, proposerId: string, deadlineInMs: number) => ({
  id,
  kind: 'TAKEOVER' as const,
  targetKind: 'batch' as const,
  targetId: String(100 + id),
  proposerId,
  proposerLogin: proposerId,
  createdAt: at(-MIN),
  deadline: at(deadlineInMs),
});

describe('needs you', () => {
  it('gives each role the sections of the actions it may take, admins all, viewers none', () => {
    expect(Object.fromEntries(ROLES.map((role) => [role, sectionsFor(role)]))).toEqual({
      viewer: [],
      operator: ['operate'],
      approver: ['approve'],
      support: ['support'],
      admin: ['approve', 'operate', 'support'],
    });
  });

  it('says what all clear covers when nothing waits, and counts nothing', () => {
    const view = needsYouFor(quiet, { id: 'u', role: 'admin' }, links);
    expect(view.count).toBe(0);
    expect(view.severity).toBeNull();
    expect(view.sections.map((s) => [s.id, s.items.length])).toEqual([
      ['approve', 0],
      ['operate', 0],
      ['support', 0],
    ]);
    expect(view.sections.map((s) => s.allClear).join(' ')).toMatch(/proposal.*stale.*corrupt.*lease.*dead-letter/s);
  });

  it("leaves out the reader's own proposals and turns one red 5 minutes before its deadline", () => {
    const snapshot = {
      ...quiet,
      pending: [proposal(1, 'ana', 4 * MIN), proposal(2, 'ben', 20 * MIN), proposal(3, 'ana', 30 * MIN)],
      pendingCount: 3,
      pendingHourAgo: 1,
    };
    const ben = needsYouFor(snapshot, { id: 'ben', role: 'approver' }, links);
    const item = ben.sections[0]!.items[0]!;
    expect(item.proposals!.map((p) => [p.id, p.severity, p.href])).toEqual([
      [1, 'critical', '/recovery/1'],
      [3, 'warning', '/recovery/3'],
    ]);
    expect(item).toMatchObject({ figure: 2, count: 2, change: 2, severity: 'critical' });
    expect(item.runbook).toEqual({
      alert: 'KeelProposalNearDeadline',
      path: 'docs/alerts.md#keelproposalneardeadline',
    });
    expect(ben.pendingProposals).toBe(3);
    const ana = needsYouFor(snapshot, { id: 'ana', role: 'approver' }, links);
    expect(ana.sections[0]!.items[0]!).toMatchObject({ figure: 1, severity: 'warning' });
    // The live total is for every role, viewers included.
    expect(needsYouFor(snapshot, { id: 'v', role: 'viewer' }, links)).toMatchObject({ count: 0, pendingProposals: 3 });
  });

  it('turns stale executions and lapsed leases red after 15 minutes, as their alerts', () => {
    const snapshot = (staleForMs: number, lapsedForMs: number): NeedsYouSnapshot => ({
      ...quiet,
      stale: { lastHour: 3, hourBefore: 5, oldestUpdatedAt: at(-10 * MIN - staleForMs) },
      lapsed: { count: 2, hourAgo: 1, oldestExpiredAt: at(-lapsedForMs) },
    });
    const severities = (s: NeedsYouSnapshot) =>
      needsYouFor(s, { id: 'o', role: 'operator' }, links).sections[0]!.items.map((i) => [i.key, i.severity]);
    expect(severities(snapshot(14 * MIN, 14 * MIN))).toEqual([
      ['staleExecutions', 'warning'],
      ['lapsedLeases', 'warning'],
    ]);
    expect(severities(snapshot(15 * MIN, 15 * MIN))).toEqual([
      ['staleExecutions', 'critical'],
      ['lapsedLeases', 'critical'],
    ]);
    const stale = needsYouFor(snapshot(0, 0), { id: 'o', role: 'operator' }, links).sections[0]!.items[0]!;
    expect(stale).toMatchObject({ figure: 3, change: -2, count: 3 });
    // Exactly the executions that turned stale in the last hour: updated between threshold + 1 h and threshold ago.
    expect(stale.href).toBe(`/executions?stale=1&from=${at(-70 * MIN)}&to=${at(-10 * MIN)}`);
  });

  it('shows corrupt envelopes only when new ones appeared within the hour', () => {
    const operate = (corrupt: NeedsYouSnapshot['corrupt']) =>
      needsYouFor({ ...quiet, corrupt }, { id: 'o', role: 'operator' }, links).sections[0]!.items;
    expect(operate({ now: 4, hourAgo: 4 })).toEqual([]);
    expect(operate({ now: 4, hourAgo: null })).toEqual([]);
    expect(operate({ now: 6, hourAgo: 4 })).toMatchObject([{ key: 'corruptEnvelopes', change: 2, count: 2 }]);
  });

  it('lists dead-letter reasons rising against the hour before, red past the alert threshold', () => {
    const view = needsYouFor(
      {
        ...quiet,
        deadLetters: [
          { reason: 'rpc', lastHour: 80, hourBefore: 10, window: 51 },
          { reason: 'backend', lastHour: 6, hourBefore: 2, window: 6 },
          { reason: 'invalid_observation', lastHour: 2, hourBefore: 2, window: 0 },
          { reason: 'other', lastHour: 1, hourBefore: null, window: 1 },
        ],
      },
      { id: 's', role: 'support' },
      links,
    );
    expect(view.sections[0]!.items.map((i) => [i.title, i.change, i.severity])).toEqual([
      ['Dead letters: rpc', 70, 'critical'],
      ['Dead letters: backend', 4, 'warning'],
      ['Dead letters: other', null, 'warning'],
    ]);
    expect(view).toMatchObject({ count: 3, severity: 'critical' });
  });

  it('words a change', () => {
    expect([3, -2, 0, null].map(formatChange)).toEqual([
      '+3 since an hour ago',
      '−2 since an hour ago',
      'no change since an hour ago',
      'no figure from an hour ago',
    ]);
  });
});

describe('calm rows', () => {
  it('counts rows new, gone or changed between what is shown and what waits', () => {
    const shown = [
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
      { id: 3, v: 'c' },
    ];
    expect(rowsDiffering(shown, shown, (r) => r.id)).toBe(0);
    expect(
      rowsDiffering(
        shown,
        [
          { id: 4, v: 'd' },
          { id: 1, v: 'a' },
          { id: 2, v: 'B' },
        ],
        (r) => r.id,
      ),
    ).toBe(3); // 4 new, 2 changed, 3 gone
  });
});
