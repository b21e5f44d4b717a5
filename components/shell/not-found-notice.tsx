'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';

const LINK = 'font-medium text-sky-800 underline dark:text-sky-300';

interface Missing {
  /** What was asked for, after "No": e.g. "execution 999999999". */
  what: string;
  /** Why it may be missing, in a sentence. */
  why: string;
  lists: { href: string; label: string }[];
}

const decoded = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};

/** The detail pages a wrong id reaches, by their path, and the lists they belong to. */
function missingAt(pathname: string): Missing {
  const segments = pathname.split('/').filter(Boolean).map(decoded);
  const [section, first, second] = segments;
  if (segments.length === 2 && section === 'executions') {
    return { what: `execution ${first}`, why: 'No execution of the runtime has this id.', lists: [{ href: '/executions', label: 'All executions' }] };
  }
  if (segments.length === 2 && section === 'recovery') {
    return { what: `recovery proposal ${first}`, why: 'No recovery proposal has this id; proposal ids are numbers.', lists: [{ href: '/recovery', label: 'All recovery proposals' }] };
  }
  if (segments.length === 3 && section === 'settlements' && first === 'bulk') {
    return { what: `bulk replay ${second}`, why: 'No bulk replay job has this id.', lists: [{ href: '/settlements/bulk', label: 'All bulk replays' }] };
  }
  if (segments.length === 2 && section === 'settlements') {
    return {
      what: `receipt ${first}`,
      why: 'It is not queued, not dead-lettered, and Keel holds no history for it; receipt ids are matched exactly.',
      lists: [
        { href: '/settlements?state=all', label: 'The settlement queue' },
        { href: '/settlements/dead-letters', label: 'Dead letters' },
      ],
    };
  }
  return { what: `page at ${pathname}`, why: 'The console has no page at this address.', lists: [{ href: '/', label: 'Overview' }] };
}

/** What a console page says, inside the console, when the thing its address names does not exist (HTTP 404). */
export function NotFoundNotice() {
  const missing = missingAt(usePathname() ?? '/');
  return (
    <section aria-labelledby="not-found-title" className="max-w-xl rounded-lg border border-zinc-200 bg-white p-6 dark:border-zinc-800 dark:bg-zinc-900">
      <p className="font-mono text-sm text-zinc-600 dark:text-zinc-400">404 NOT FOUND</p>
      <h1 id="not-found-title" className="mt-1 text-2xl font-semibold tracking-tight [overflow-wrap:anywhere]">
        No {missing.what}
      </h1>
      <p className="mt-2 text-sm">{missing.why}</p>
      <ul className="mt-4 flex flex-wrap gap-4 text-sm">
        {missing.lists.map((list) => (
          <li key={list.href}>
            <Link href={list.href} className={LINK}>
              {list.label}
            </Link>
          </li>
        ))}
      </ul>
    </section>
  );
}
