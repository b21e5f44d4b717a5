import { describe, expect, it } from 'vitest';
import { auditListQuerySchema } from '../../lib/domain/audit-filters';
import { LIVE_TOPICS, topicOfTable } from '../../lib/domain/live-topics';
import { auditSearchOf, auditStateOf, auditTargetFilterHref, loadAuditSearch } from '../../lib/url-state/audit';
import { executionsHref, loadExecutionsSearch } from '../../lib/url-state/executions';
import {
  corruptEnvelopesParams,
  loadRetryKeysSearch,
  retryKeysHref,
  unresolvedKeysParams,
} from '../../lib/url-state/retry-keys';
import { deadLettersHref, loadQueueSearch } from '../../lib/url-state/settlements';
import { RETRY_KEY_PAGE_SIZE } from '../../lib/queries/retry-keys';

describe('URL state', () => {
  it('parses typed filters the same way on every side, and drops values outside a vocabulary', () => {
    const search = loadExecutionsSearch({ status: 'FAILED', updatedFrom: '2026-01-31T09:00:00.000Z', q: '42' });
    expect(search.status).toBe('FAILED');
    expect(search.updatedFrom?.toISOString()).toBe('2026-01-31T09:00:00.000Z');
    expect(loadExecutionsSearch({ status: 'BOGUS' }).status).toBeNull();
    expect(loadQueueSearch({ state: 'leased', reason: 'not-a-code' })).toMatchObject({ state: 'leased', reason: null });
  });

  it('builds links from the same parsers, leaving out empty filters', () => {
    expect(executionsHref({ status: 'FAILED', cursor: null })).toBe('/executions?status=FAILED');
    expect(deadLettersHref({ reason: 'rpc', q: null })).toBe('/settlements/dead-letters?reason=rpc');
  });

  it('carries the audit time range to the API params the schema accepts; refuses one ending before it starts', () => {
    const state = loadAuditSearch({
      from: '2026-01-31T09:00:00.000Z',
      to: '2026-02-01T09:00:00.000Z',
      outcome: 'REFUSED',
    });
    const search = auditSearchOf(state);
    expect(search).toEqual({ outcome: 'REFUSED', from: '2026-01-31T09:00:00.000Z', to: '2026-02-01T09:00:00.000Z' });
    expect(auditListQuerySchema.safeParse(search).success).toBe(true);
    expect(auditSearchOf({ ...auditStateOf(search), cursor: null })).toEqual(search);
    const backwards = auditListQuerySchema.safeParse({ from: search.to, to: search.from });
    expect(backwards.success).toBe(false);
    expect(auditListQuerySchema.safeParse({ from: 'yesterday' }).success).toBe(false);
  });
});

describe('the retry keys page', () => {
  it('asks for a page of either list as every list does, the server’s page size', () => {
    const search = loadRetryKeysSearch({ phase: 'read' });
    expect(unresolvedKeysParams(search)).toMatchObject({ only: 'keys', phase: 'read' });
    expect(corruptEnvelopesParams(search)).toMatchObject({ only: 'corrupt' });
    // No size of their own: the read API and the page's prefetch take the server's.
    expect(unresolvedKeysParams(search)).not.toHaveProperty('limit');
    expect(corruptEnvelopesParams(search)).not.toHaveProperty('limit');
    expect(RETRY_KEY_PAGE_SIZE).toBe(50);
  });

  it('narrows both lists to one execution from the execution page’s link, and the audit log to one target', () => {
    expect(retryKeysHref({ execution: 42 })).toBe('/retry-keys?execution=42');
    const search = loadRetryKeysSearch({ execution: '42' });
    expect(unresolvedKeysParams(search)).toMatchObject({ only: 'keys', executionId: 42 });
    expect(corruptEnvelopesParams(search)).toMatchObject({ only: 'corrupt', executionId: 42 });
    expect(loadRetryKeysSearch({ execution: 'x' }).execution).toBeNull();
    expect(auditTargetFilterHref('settlement', 'rcpt 1/2')).toBe('/audit?targetKind=settlement&targetId=rcpt+1/2');
    expect(loadAuditSearch(new URLSearchParams('targetKind=settlement&targetId=rcpt+1/2'))).toMatchObject({
      targetKind: 'settlement',
      targetId: 'rcpt 1/2',
    });
  });
});

describe('live topics', () => {
  it('maps every notifying table to one topic, and nothing else', () => {
    expect(topicOfTable('oxide_batch.ob_job_execution')).toBe('executions');
    expect(topicOfTable('settle.dead_letters')).toBe('settlements');
    expect(topicOfTable('keel.audit_event')).toBe('audit');
    expect(topicOfTable('toString')).toBeNull();
    expect(LIVE_TOPICS).toEqual(expect.arrayContaining(['executions', 'proposals', 'settlements', 'audit', 'users']));
  });
});
