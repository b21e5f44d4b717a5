import { can, type Role } from './roles';

/**
 * "Needs you": what waits on the reader's role, on the overview and as a count in the
 * navigation (docs/console.md#needs-you). The server reads one snapshot per change for
 * everyone (lib/queries/needs-you.ts) and cuts each reader's view from it here.
 */

/** The alerts whose runbooks (docs/alerts.md) the items link to. */
export const NEEDS_YOU_RUNBOOKS = {
  proposals: 'KeelProposalNearDeadline',
  staleExecutions: 'KeelStaleExecutions',
  corruptEnvelopes: 'KeelCorruptEnvelopes',
  lapsedLeases: 'KeelOrchestrationLeasesLapsed',
  deadLetters: 'KeelDeadLettersGrowing',
} as const;
export type NeedsYouKind = keyof typeof NEEDS_YOU_RUNBOOKS;

/** An alert's runbook: its heading in docs/alerts.md, at the anchor GitHub and most Markdown renderers give it. */
export interface Runbook {
  alert: string;
  path: string;
}
export const runbookOf = (alert: string): Runbook => ({ alert, path: `docs/alerts.md#${alert.toLowerCase()}` });

/**
 * Red: the condition the item's alert waits for holds now (docs/alerts.md), so the alert
 * fires or is about to. Amber: someone should look, the alert's threshold is not reached.
 */
export type NeedsYouSeverity = 'critical' | 'warning';

/** A proposal's deadline this close is KeelProposalNearDeadline's condition. */
export const PROPOSAL_DEADLINE_CRITICAL_MS = 5 * 60_000;
/** Stale this long: KeelStaleExecutions' `for: 15m`. */
export const STALE_CRITICAL_MS = 15 * 60_000;
/** Lapsed this long: KeelOrchestrationLeasesLapsed's `for: 15m`. */
export const LAPSED_CRITICAL_MS = 15 * 60_000;
export const HOUR_MS = 3_600_000;

export interface PendingProposal {
  id: number;
  kind: 'TAKEOVER' | 'ABANDON';
  targetKind: 'batch' | 'orchestration';
  targetId: string;
  proposerId: string;
  proposerLogin: string;
  createdAt: string;
  deadline: string;
}

/** What the server reads once per change, the same for every reader (ISO times, server clock). */
export interface NeedsYouSnapshot {
  serverNow: string;
  staleThresholdMs: number;
  /** Every pending proposal, earliest deadline first (at most PENDING_LIMIT). */
  pending: PendingProposal[];
  pendingCount: number;
  /** Pending proposals in the metric sample of an hour ago; null without one. */
  pendingHourAgo: number | null;
  /** Active executions that turned stale within the last hour, and within the hour before (and still are). */
  stale: { lastHour: number; hourBefore: number; oldestUpdatedAt: string | null };
  /** Corrupt envelopes in the last sample and in the sample of an hour ago. */
  corrupt: { now: number | null; hourAgo: number | null };
  /** Lapsed orchestration leases, those already lapsed an hour ago, and the earliest expiry. */
  lapsed: { count: number; hourAgo: number; oldestExpiredAt: string | null };
  /** Dead-lettered settlements by reason, from the sampled counter: last hour, the hour before, the alert's window. */
  deadLetters: { reason: string; lastHour: number; hourBefore: number | null; window: number }[];
  deadLetterThreshold: number;
  deadLetterWindowMs: number;
}

export const PENDING_LIMIT = 50;

export interface NeedsYouItem {
  kind: NeedsYouKind;
  /** Stable per item: the kind, and the reason for dead letters. */
  key: string;
  severity: NeedsYouSeverity;
  title: string;
  /** The figure the item is about. */
  figure: number;
  /** The figure's change since an hour ago; null when no figure of an hour ago exists. */
  change: number | null;
  /** What the figure and its change count, in words. */
  detail: string;
  /** How many things this item adds to the navigation's count. */
  count: number;
  href: string;
  runbook: Runbook;
  /** Proposals waiting for this reader's decision, earliest deadline first. */
  proposals?: (PendingProposal & { severity: NeedsYouSeverity; href: string })[];
}

export interface NeedsYouSection {
  id: 'approve' | 'operate' | 'support';
  title: string;
  /** What "all clear" covers: said when the section has no item. */
  allClear: string;
  items: NeedsYouItem[];
}

export interface NeedsYouView {
  serverNow: string;
  sections: NeedsYouSection[];
  count: number;
  severity: NeedsYouSeverity | null;
  /** Pending proposals now, read live: every role sees this figure on the overview. */
  pendingProposals: number;
  /** Where the runbooks are read (KEEL_DOCS_URL); null: they are named by path. */
  docsUrl: string | null;
}

/** Links the view needs, made where the URL serializers live (lib/url-state/needs-you.ts). */
export interface NeedsYouLinks {
  pending: string;
  proposal: (id: number) => string;
  staleBetween: (from: Date, to: Date) => string;
  corrupt: string;
  leases: string;
  deadLetters: (reason: string) => string;
}

/** Which sections a role reads: those whose actions it may take. Admins take every action, so see every section. */
export function sectionsFor(role: Role): NeedsYouSection['id'][] {
  const ids: NeedsYouSection['id'][] = [];
  if (can(role, 'decideRecovery')) ids.push('approve');
  if (can(role, 'proposeRecovery')) ids.push('operate');
  if (can(role, 'replaySettlement')) ids.push('support');
  return ids;
}

export const ALL_CLEAR: Record<NeedsYouSection['id'], string> = {
  approve: 'No proposal waits for your decision (proposals you made yourself go to another approver).',
  operate:
    'No execution turned stale in the last hour, ' +
    'no corrupt envelope appeared in the last hour and no orchestration lease has lapsed.',
  support: 'No dead-letter reason rose in the last hour against the hour before.',
};

const SECTION_TITLES: Record<NeedsYouSection['id'], string> = {
  approve: 'Proposals to decide',
  operate: 'Executions and orchestrations',
  support: 'Dead letters',
};

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
const ms = (iso: string) => new Date(iso).getTime();

/** The reader's view: the sections of their role, with only what they may act on. */
export function needsYouFor(
  snapshot: NeedsYouSnapshot,
  reader: { id: string; role: Role },
  links: NeedsYouLinks,
  docsUrl: string | null = null,
): NeedsYouView {
  const now = ms(snapshot.serverNow);
  const sections = sectionsFor(reader.role).map((id): NeedsYouSection => {
    const items =
      id === 'approve'
        ? approveItems(snapshot, reader.id, now, links)
        : id === 'operate'
          ? operateItems(snapshot, now, links)
          : supportItems(snapshot, links);
    return { id, title: SECTION_TITLES[id], allClear: ALL_CLEAR[id], items };
  });
  const items = sections.flatMap((s) => s.items);
  return {
    serverNow: snapshot.serverNow,
    sections,
    count: items.reduce((sum, item) => sum + item.count, 0),
    severity: items.some((i) => i.severity === 'critical') ? 'critical' : items.length > 0 ? 'warning' : null,
    pendingProposals: snapshot.pendingCount,
    docsUrl,
  };
}

function approveItems(snapshot: NeedsYouSnapshot, readerId: string, now: number, links: NeedsYouLinks) {
  // Four eyes: a proposal is never decided by the person who made it.
  const mine = snapshot.pending.filter((p) => p.proposerId !== readerId);
  if (mine.length === 0) return [];
  const proposals = mine.map((p) => ({
    ...p,
    severity: (ms(p.deadline) - now <= PROPOSAL_DEADLINE_CRITICAL_MS ? 'critical' : 'warning') as NeedsYouSeverity,
    href: links.proposal(p.id),
  }));
  const change = snapshot.pendingHourAgo === null ? null : snapshot.pendingCount - snapshot.pendingHourAgo;
  const item: NeedsYouItem = {
    kind: 'proposals',
    key: 'proposals',
    severity: proposals.some((p) => p.severity === 'critical') ? 'critical' : 'warning',
    title: 'Pending proposals',
    figure: proposals.length,
    change,
    detail:
      `${plural(proposals.length, 'proposal')} for you to confirm or reject before its deadline; ` +
      `the change counts every pending proposal`,
    count: proposals.length,
    href: links.pending,
    runbook: runbookOf(NEEDS_YOU_RUNBOOKS.proposals),
    proposals,
  };
  return [item];
}

function operateItems(snapshot: NeedsYouSnapshot, now: number, links: NeedsYouLinks): NeedsYouItem[] {
  const items: NeedsYouItem[] = [];
  const { stale, corrupt, lapsed, staleThresholdMs } = snapshot;
  if (stale.lastHour > 0) {
    const oldestStaleFor = stale.oldestUpdatedAt === null ? 0 : now - ms(stale.oldestUpdatedAt) - staleThresholdMs;
    items.push({
      kind: 'staleExecutions',
      key: 'staleExecutions',
      severity: oldestStaleFor >= STALE_CRITICAL_MS ? 'critical' : 'warning',
      title: 'Executions turned stale',
      figure: stale.lastHour,
      change: stale.lastHour - stale.hourBefore,
      detail:
        `${plural(stale.lastHour, 'active execution')} stopped updating within the last hour ` +
        `(${plural(stale.hourBefore, 'execution')} in the hour before)`,
      count: stale.lastHour,
      // Exactly those: stale, last updated between the threshold plus an hour ago and the threshold ago.
      href: links.staleBetween(new Date(now - staleThresholdMs - HOUR_MS), new Date(now - staleThresholdMs)),
      runbook: runbookOf(NEEDS_YOU_RUNBOOKS.staleExecutions),
    });
  }
  if (corrupt.now !== null && corrupt.hourAgo !== null && corrupt.now > corrupt.hourAgo) {
    const appeared = corrupt.now - corrupt.hourAgo;
    items.push({
      kind: 'corruptEnvelopes',
      key: 'corruptEnvelopes',
      severity: 'critical',
      title: 'Corrupt envelopes',
      figure: corrupt.now,
      change: appeared,
      detail:
        `${plural(appeared, 'fault-state envelope')} failed validation within the last hour; ` +
        `${corrupt.now.toLocaleString('en-US')} in all`,
      count: appeared,
      href: links.corrupt,
      runbook: runbookOf(NEEDS_YOU_RUNBOOKS.corruptEnvelopes),
    });
  }
  if (lapsed.count > 0) {
    const longest = lapsed.oldestExpiredAt === null ? 0 : now - ms(lapsed.oldestExpiredAt);
    items.push({
      kind: 'lapsedLeases',
      key: 'lapsedLeases',
      severity: longest >= LAPSED_CRITICAL_MS ? 'critical' : 'warning',
      title: 'Lapsed orchestration leases',
      figure: lapsed.count,
      change: lapsed.count - lapsed.hourAgo,
      detail:
        `${plural(lapsed.count, 'orchestration')} whose lease lapsed with nobody taking over; ` +
        `${(lapsed.count - lapsed.hourAgo).toLocaleString('en-US')} of them lapsed within the last hour`,
      count: lapsed.count,
      href: links.leases,
      runbook: runbookOf(NEEDS_YOU_RUNBOOKS.lapsedLeases),
    });
  }
  return items;
}

function supportItems(snapshot: NeedsYouSnapshot, links: NeedsYouLinks): NeedsYouItem[] {
  return snapshot.deadLetters
    .filter((d) => d.lastHour > (d.hourBefore ?? 0))
    .sort(
      (a, b) =>
        b.lastHour - (b.hourBefore ?? 0) - (a.lastHour - (a.hourBefore ?? 0)) || a.reason.localeCompare(b.reason),
    )
    .map((d) => ({
      kind: 'deadLetters' as const,
      key: `deadLetters:${d.reason}`,
      severity: (d.window > snapshot.deadLetterThreshold ? 'critical' : 'warning') as NeedsYouSeverity,
      title: `Dead letters: ${d.reason}`,
      figure: d.lastHour,
      change: d.hourBefore === null ? null : d.lastHour - d.hourBefore,
      detail:
        d.hourBefore === null
          ? `${plural(d.lastHour, 'settlement')} dead-lettered for ${d.reason} within the last hour; ` +
            `no figure for the hour before`
          : `${plural(d.lastHour, 'settlement')} dead-lettered for ${d.reason} within the last hour, ` +
            `${d.hourBefore.toLocaleString('en-US')} in the hour before`,
      count: 1,
      href: links.deadLetters(d.reason),
      runbook: runbookOf(NEEDS_YOU_RUNBOOKS.deadLetters),
    }));
}

/** "+3", "−2", "no change", or "no figure" when the hour-old figure is missing. */
export function formatChange(change: number | null): string {
  if (change === null) return 'no figure from an hour ago';
  if (change === 0) return 'no change since an hour ago';
  return `${change > 0 ? '+' : '−'}${Math.abs(change).toLocaleString('en-US')} since an hour ago`;
}
