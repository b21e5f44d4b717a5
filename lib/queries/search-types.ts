/** What search answers (lib/queries/search.ts), shaped for the header box and the results page. */

export const SEARCH_KINDS = ['execution', 'instance', 'receipt', 'retryKey', 'proposal', 'operation', 'user'] as const;
export type SearchKind = (typeof SEARCH_KINDS)[number];

/** Each kind's heading on the results page. */
export const SEARCH_KIND_LABELS: Record<SearchKind, string> = {
  execution: 'Executions',
  instance: 'Job instances',
  receipt: 'Receipts',
  retryKey: 'Retry keys',
  proposal: 'Recovery proposals',
  operation: 'Operations',
  user: 'Users',
};

/** At most this many hits of one kind; a kind with more says so instead of counting them. */
export const SEARCH_HITS_PER_KIND = 20;

export type SearchHit =
  | { kind: 'execution'; executionId: number; instanceId: number; jobName: string; status: string; attempt: number }
  /** An execution of the job instance searched for. */
  | { kind: 'instance'; instanceId: number; executionId: number; jobName: string; status: string; attempt: number }
  /** `place`: where the receipt is now; `history` when only Keel's settlement history still names it. */
  | { kind: 'receipt'; receiptId: string; place: 'queued' | 'dead_lettered' | 'history' }
  /**
   * A step whose fault-state envelope holds keys starting with the prefix;
   * `keyPrefixes` are the short forms shown on the retry-keys page.
   */
  | {
      kind: 'retryKey';
      stepId: number;
      executionId: number;
      stepLogicalId: string;
      jobName: string;
      keyPrefixes: string[];
    }
  | {
      kind: 'proposal';
      proposalId: number;
      match: 'id' | 'digest';
      status: string;
      proposalKind: string;
      targetKind: string;
      targetId: string;
      digestHex: string;
    }
  | {
      kind: 'operation';
      source: 'runtime';
      operationId: string;
      action: string;
      executionId: number | null;
      instanceId: number | null;
      outcome: string;
    }
  | { kind: 'operation'; source: 'replay'; operationId: string; receiptId: string; actorLogin: string }
  | {
      kind: 'operation';
      source: 'audit';
      operationId: string;
      action: string;
      targetKind: string;
      targetId: string;
      actorLogin: string;
      outcome: string;
    }
  | { kind: 'user'; username: string; role: string; disabled: boolean };

export interface SearchGroup {
  kind: SearchKind;
  hits: SearchHit[];
  /** More than SEARCH_HITS_PER_KIND matched; only the first are listed. */
  more: boolean;
}

export interface SearchResults {
  q: string;
  /** Only the kinds with hits, in SEARCH_KINDS order. */
  groups: SearchGroup[];
  /** Kinds that were not searched, and why (a short sentence each). */
  notes: string[];
}

const path = (...segments: (string | number)[]) => `/${segments.map((s) => encodeURIComponent(String(s))).join('/')}`;

/** The page a hit opens. */
export function searchHitHref(hit: SearchHit): string {
  switch (hit.kind) {
    case 'execution':
    case 'instance':
    case 'retryKey':
      return path('executions', hit.executionId);
    case 'receipt':
      return path('settlements', hit.receiptId);
    case 'proposal':
      return path('recovery', hit.proposalId);
    case 'user':
      return `/users#user-${encodeURIComponent(hit.username)}`;
    case 'operation':
      if (hit.source === 'replay') return path('settlements', hit.receiptId);
      if (hit.source === 'audit')
        return `/audit?${new URLSearchParams({ targetKind: hit.targetKind, targetId: hit.targetId })}`;
      if (hit.executionId !== null) return path('executions', hit.executionId);
      return hit.instanceId !== null ? `/executions?q=${hit.instanceId}` : '/executions';
  }
}

/** The one page a search leads to, when every hit opens the same page; else null (list them). */
export function singleDestination(results: SearchResults): string | null {
  const hrefs = new Set(results.groups.flatMap((group) => group.hits.map(searchHitHref)));
  return hrefs.size === 1 && results.groups.every((group) => !group.more) ? [...hrefs][0]! : null;
}
