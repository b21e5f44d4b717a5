'use client';

import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useQueryStates } from 'nuqs';
import { formatCappedCount } from '@/lib/domain/capped-count';
import { WEBHOOK_DELIVERY_STATUSES, webhookDeliverySearch } from '@/lib/domain/webhook-search';
import { ApiError } from '@/lib/http/read-json';
import { webhookDeliveriesQuery } from '@/lib/reads/queries';
import { webhooksSearch } from '@/lib/url-state/webhooks';
import { Button } from '../ui/button';
import { KeysetPager } from '../ui/keyset-pager';
import { ErrorState } from '../ui/states';
import { StatusBadge } from '../ui/status-badge';
import { useCalmRows } from '../ui/calm-rows';
import { Cell, DataTable } from '../ui/table';
import { formatRelative } from '../ui/time-ago';
import { useTimeZone } from '../ui/time-zone';
import { RetryDeliveryButton } from './retry-delivery-button';
import { SendTestButton } from './send-test-button';

const SELECT = 'rounded-md border border-zinc-300 bg-white px-2 py-1 text-sm dark:border-zinc-700 dark:bg-zinc-950';
const MUTED = 'text-zinc-600 dark:text-zinc-400';

/** Webhook endpoints and every delivery, newest first, with status, attempts and the last error. */
export function WebhookDeliveriesView() {
  const tz = useTimeZone();
  const [state, setState] = useQueryStates(webhooksSearch, { history: 'push' });
  const search = webhookDeliverySearch(state);
  const query = useQuery({ ...webhookDeliveriesQuery.options(search), placeholderData: keepPreviousData });
  // Rows being read stay put; newer ones wait behind "Updates waiting".
  const [page, calm] = useCalmRows(
    query,
    search,
    (p) => p.rows,
    (delivery) => delivery.id,
  );
  const failure = query.error instanceof ApiError ? query.error : null;
  const now = page ? new Date(page.serverNow) : new Date();

  return (
    <div className="space-y-6">
      <section aria-labelledby="webhook-endpoints">
        <h2 id="webhook-endpoints" className="mb-2 text-sm font-semibold">
          Endpoints
        </h2>
        {page && page.endpoints.length === 0 ? (
          <p className={`text-sm ${MUTED}`}>
            No endpoint is configured. Set <code className="font-mono text-xs">KEEL_WEBHOOK_URLS</code> and a signing
            secret per endpoint (docs/webhooks.md).
          </p>
        ) : (
          <ul className="flex flex-wrap gap-2 text-sm">
            {page?.endpoints.map((e) => (
              <li
                key={e.name}
                className={
                  'flex flex-wrap items-center gap-x-2 rounded-md border border-zinc-200 px-3 py-1.5 ' +
                  'dark:border-zinc-800'
                }
              >
                <span className="font-medium">{e.name}</span>
                <span className={`font-mono text-xs ${MUTED}`}>{e.origin}</span>
                <span className="rounded bg-zinc-100 px-1.5 py-0.5 text-xs dark:bg-zinc-800">{e.format}</span>
                {e.enabled ? (
                  <SendTestButton endpoint={e.name} />
                ) : (
                  <span className={`text-xs ${MUTED}`}>(removed from the settings)</span>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="webhook-deliveries">
        <div className="mb-2 flex flex-wrap items-end justify-between gap-3">
          <h2 id="webhook-deliveries" className="text-sm font-semibold">
            Deliveries
          </h2>
          <form aria-label="Delivery filters" onSubmit={(e) => e.preventDefault()}>
            <label className="text-xs font-medium text-zinc-700 dark:text-zinc-300">
              Status
              <select
                className={`${SELECT} ml-2`}
                value={state.status ?? ''}
                onChange={(e) =>
                  setState({
                    status: WEBHOOK_DELIVERY_STATUSES.find((s) => s === e.target.value) ?? null,
                    cursor: null,
                  })
                }
              >
                <option value="">Any</option>
                {WEBHOOK_DELIVERY_STATUSES.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            </label>
          </form>
          <p className="text-sm" data-testid="delivery-count">
            {page
              ? `${formatCappedCount(page.count)} ` +
                `${page.count.value === 1 && !page.count.capped ? 'delivery' : 'deliveries'}`
              : '\u00a0'}
          </p>
        </div>
        {query.isError && !page ? (
          <ErrorState
            title={`Could not load deliveries${failure ? ` (${failure.code})` : ''}`}
            detail={
              <>
                {query.error.message}{' '}
                <Button className="ml-2" onClick={() => query.refetch()}>
                  Try again
                </Button>
              </>
            }
          />
        ) : !page ? (
          <p role="status" className={`p-8 text-center text-sm ${MUTED}`}>
            Loading deliveries…
          </p>
        ) : (
          <>
            <DataTable
              caption="Webhook deliveries"
              calm={calm}
              head={[
                'Event',
                'Endpoint',
                'Status',
                'Attempts',
                tz.heading('Next attempt', now),
                'Last result',
                tz.heading('Created', now),
                'Action',
              ]}
            >
              {page.rows.length === 0 ? (
                <tr>
                  <td colSpan={8} className={`px-3 py-8 text-center ${MUTED}`}>
                    {state.status ? 'No delivery has this status.' : 'Nothing has been sent yet.'}
                  </td>
                </tr>
              ) : (
                page.rows.map((d) => (
                  <tr key={d.id}>
                    <Cell mono>
                      {d.kind}
                      <Subject subject={d.subject} />
                    </Cell>
                    <Cell>{d.endpoint}</Cell>
                    <Cell>
                      <StatusBadge status={d.status} />
                    </Cell>
                    <Cell>{d.attempts}</Cell>
                    <Cell>
                      {d.status === 'PENDING' ? (
                        <StackedTime at={d.nextAttemptAt} now={now} />
                      ) : (
                        <span className={MUTED}>—</span>
                      )}
                    </Cell>
                    <Cell wrap>
                      {d.status === 'DELIVERED' && d.deliveredAt ? (
                        <>
                          HTTP {d.lastHttpStatus}
                          <StackedTime at={d.deliveredAt} now={now} />
                        </>
                      ) : (
                        (d.lastError ?? <span className={MUTED}>not tried yet</span>)
                      )}
                    </Cell>
                    <Cell>
                      <StackedTime at={d.createdAt} now={now} />
                    </Cell>
                    <Cell>
                      {d.status === 'DELIVERED' ? (
                        <span className={MUTED}>—</span>
                      ) : (
                        <RetryDeliveryButton deliveryId={d.id} sending={d.sending} />
                      )}
                    </Cell>
                  </tr>
                ))
              )}
            </DataTable>
            <div className="mt-3">
              <KeysetPager
                label="Delivery pages"
                cursor={state.cursor}
                nextCursor={page.nextCursor}
                onChange={(cursor) => setState({ cursor })}
              />
            </div>
          </>
        )}
      </section>
    </div>
  );
}

/**
 * A time as "3 min ago" over its time in small print, its zone in the column's heading: two short lines instead of one
 * long one, so the table's eight columns fit a 1440 px screen without scrolling.
 */
function StackedTime({ at, now }: { at: string; now: Date }) {
  const tz = useTimeZone();
  const date = new Date(at);
  return (
    <time dateTime={date.toISOString()} className="block">
      {formatRelative(date, now)}
      <span className={`block text-xs ${MUTED}`}>{tz.inColumn(date, now)}</span>
    </time>
  );
}

/**
 * What the event is about (`proposal:17`, `dead_letters:<reason>`): it may break after its
 * colon, and anywhere in a long reason, so the first column stays narrow.
 */
function Subject({ subject }: { subject: string }) {
  const colon = subject.indexOf(':') + 1;
  return (
    <span className={`block whitespace-normal [overflow-wrap:anywhere] ${MUTED}`}>
      {subject.slice(0, colon)}
      <wbr />
      {subject.slice(colon)}
    </span>
  );
}
