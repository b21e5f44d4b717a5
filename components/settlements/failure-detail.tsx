import {
  EMPTY_DETAIL_SHA256_HEX,
  deadLetterSentence,
  failureCodeWords,
  failureRetryWords,
  retrySentence,
} from '@/lib/domain/settlement-failure';
import type { ReceiptHistory } from '@/lib/queries/settlements-types';
import { CopyButton } from '../ui/copy-button';
import { Fact } from '../ui/fact';
import { TimeAgo } from '../ui/time-ago';

const MUTED = 'text-zinc-600 dark:text-zinc-400';
const WARNING = [
  'mt-3 rounded border border-amber-300 bg-amber-50 p-2 text-sm text-amber-950',
  'dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100',
].join(' ');

/** A digest in full, as lowercase hex that wraps on a narrow screen, with a copy button. */
function DetailDigest({ hex }: { hex: string | null }) {
  if (hex === null) return <span className={MUTED}>unreadable (see below)</span>;
  return (
    <>
      <span className="font-mono text-xs break-all" data-testid="detail-sha256">
        {hex}
      </span>
      <CopyButton value={hex} label="Copy detail SHA-256" />
      {hex === EMPTY_DETAIL_SHA256_HEX ? (
        <span className={`block text-xs ${MUTED}`}>the digest of no detail</span>
      ) : null}
    </>
  );
}

function Meaning({ code }: { code: string }) {
  return (
    <>
      <span className="font-mono text-xs">{code}</span>
      <span className={`block text-xs ${MUTED}`}>{failureCodeWords(code)}</span>
    </>
  );
}

const DETAIL_NOTE =
  'The runtime keeps the SHA-256 of a failure’s detail, never the detail itself: ' +
  'look the digest up in the worker’s logs.';

/**
 * A receipt's failure in words: a sentence from the reason code, attempts and time, then each
 * field by name, the detail digest as hex (docs/console.md#settlements). Null when the receipt
 * carries no failure (queued for its first try, finished or discarded).
 */
export function FailureDetail({ history, now }: { history: ReceiptHistory; now: Date }) {
  const { deadLetter, queued } = history;
  if (deadLetter) {
    const record = deadLetter.record;
    return (
      <section aria-labelledby="receipt-failure" className="mt-4 border-t border-zinc-200 pt-4 dark:border-zinc-800">
        <h2 id="receipt-failure" className="mb-1 text-sm font-semibold">
          Failure
        </h2>
        <p className="text-sm" data-testid="failure-sentence">
          {deadLetterSentence(deadLetter)} Recorded <TimeAgo at={new Date(deadLetter.recordedAtMs)} now={now} />.
        </p>
        <p className={`mb-3 text-sm ${MUTED}`}>{failureRetryWords(deadLetter.reason)}</p>
        <dl className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
          <Fact label="Reason code">
            <Meaning code={deadLetter.reason} />
          </Fact>
          <Fact label="Attempts">{deadLetter.attempts}</Fact>
          <Fact label="Recorded">
            <TimeAgo at={new Date(deadLetter.recordedAtMs)} now={now} />
          </Fact>
          <Fact label="Settlement finalized">
            <TimeAgo at={new Date(deadLetter.finalizedAt)} now={now} />
          </Fact>
          <Fact label="Record schema">
            <span className="font-mono text-xs">{record.ok ? record.schema : '—'}</span>
          </Fact>
          <Fact label="Detail SHA-256">
            <DetailDigest hex={deadLetter.detailSha256Hex} />
          </Fact>
        </dl>
        {!record.ok ? (
          <p className={WARNING} role="note">
            The stored dead letter cannot be read: {record.problem}.
          </p>
        ) : record.disagreements.length > 0 ? (
          <div className={WARNING} role="note">
            The stored JSON disagrees with the row:
            <ul className="ml-5 list-disc">
              {record.disagreements.map((d) => (
                <li key={d}>{d}</li>
              ))}
            </ul>
          </div>
        ) : null}
        <p className={`mt-3 text-xs ${MUTED}`}>{DETAIL_NOTE}</p>
      </section>
    );
  }
  if (queued?.reasonCode) {
    return (
      <section aria-labelledby="receipt-failure" className="mt-4 border-t border-zinc-200 pt-4 dark:border-zinc-800">
        <h2 id="receipt-failure" className="mb-1 text-sm font-semibold">
          Last failure
        </h2>
        <p className="text-sm" data-testid="failure-sentence">
          {retrySentence({ reasonCode: queued.reasonCode, attempts: queued.attempts })}{' '}
          {queued.workKind === 'retry_scheduled' ? (
            <>
              Next try <TimeAgo at={new Date(queued.nextVisibleAtMs)} now={now} />.
            </>
          ) : null}
        </p>
        <p className={`mb-3 text-sm ${MUTED}`}>{failureRetryWords(queued.reasonCode)}</p>
        <dl className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
          <Fact label="Reason code">
            <Meaning code={queued.reasonCode} />
          </Fact>
          <Fact label="Failed attempts">{queued.attempts}</Fact>
          <Fact label="Detail SHA-256">
            {queued.reasonDetailSha256Hex ? (
              <DetailDigest hex={queued.reasonDetailSha256Hex} />
            ) : (
              <span className={MUTED}>not recorded</span>
            )}
          </Fact>
        </dl>
        <p className={`mt-3 text-xs ${MUTED}`}>{DETAIL_NOTE}</p>
      </section>
    );
  }
  return null;
}
