import type { TagVerification } from '@/lib/queries/orchestration-detail-types';

/** The badge beside the title: the key and the tag stay on the server, only the verdict comes here. */
export function TagBadge({ verification }: { verification: TagVerification }) {
  return verification.verified ? (
    <span
      className={
        'rounded bg-emerald-100 px-1.5 py-0.5 text-xs font-medium text-emerald-900 dark:bg-emerald-950 ' +
        'dark:text-emerald-200'
      }
    >
      tag verified
    </span>
  ) : (
    <span
      className={'rounded bg-red-100 px-1.5 py-0.5 text-xs font-medium text-red-900 dark:bg-red-950 dark:text-red-200'}
    >
      tag not verified
    </span>
  );
}

/** What the verdict means for the rest of the page, and why a tag does not verify. */
export function TagVerificationNotice({
  verification,
  hasCheckpoint,
}: {
  verification: TagVerification;
  hasCheckpoint: boolean;
}) {
  if (verification.verified) {
    return (
      <section
        aria-label="Authentication"
        data-testid="tag-verification"
        className={
          'mb-6 rounded-lg border border-emerald-300 bg-emerald-50 p-4 text-sm text-emerald-950 ' +
          'dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-100'
        }
      >
        <p className="font-medium">Verified</p>
        <p className="mt-1">
          The checkpoint’s tag is the HMAC-SHA256 of its contents under the server’s checkpoint key: what follows is
          what its orchestrator sealed.
        </p>
      </section>
    );
  }
  return (
    <section
      aria-label="Authentication"
      data-testid="tag-verification"
      className={
        'mb-6 rounded-lg border border-red-300 bg-red-50 p-4 text-sm text-red-950 dark:border-red-800 ' +
        'dark:bg-red-950 dark:text-red-100'
      }
    >
      <p className="font-medium">
        Not verified <span className="font-mono text-xs">({verification.code})</span>
      </p>
      <p className="mt-1">{verification.why}</p>
      <p className="mt-1">
        {hasCheckpoint
          ? 'What follows is shown as stored and may have been forged; it is never a takeover candidate.'
          : 'Only the row’s lease columns can be shown; it is never a takeover candidate.'}
      </p>
    </section>
  );
}
