'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { LINK } from './links';

const decoded = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** What /orchestrations/<id> says (HTTP 404) when no checkpoint has that execution id. */
export function OrchestrationNotFound() {
  const id = decoded((usePathname() ?? '').split('/').filter(Boolean)[1] ?? '');
  return (
    <section
      aria-labelledby="not-found-title"
      className="max-w-xl rounded-lg border border-zinc-200 bg-white p-6 dark:border-zinc-800 dark:bg-zinc-900"
    >
      <p className="font-mono text-sm text-zinc-600 dark:text-zinc-400">404 NOT FOUND</p>
      <h1 id="not-found-title" className="mt-1 text-2xl font-semibold tracking-tight [overflow-wrap:anywhere]">
        No orchestration {id}
      </h1>
      <p className="mt-2 text-sm">No orchestration checkpoint has this execution id; ids are matched exactly.</p>
      <p className="mt-4 text-sm">
        <Link href="/recovery#orchestrations" className={`font-medium ${LINK}`}>
          Orchestration leases
        </Link>
      </p>
    </section>
  );
}
