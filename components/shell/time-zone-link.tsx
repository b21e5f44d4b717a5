'use client';

import Link from 'next/link';
import { useTimeZone } from '../ui/time-zone';

const LINK =
  'inline-flex items-center gap-1 text-sm text-zinc-700 underline decoration-dotted underline-offset-2 ' +
  'hover:text-sky-800 dark:text-zinc-300 dark:hover:text-sky-300';

/** The zone every time is shown in, in the header ("Times in" for screen readers), linking to where it is changed. */
export function TimeZoneLink() {
  const { zone, preference } = useTimeZone();
  return (
    <Link
      href="/preferences"
      prefetch={false}
      title={preference === 'browser' ? 'Times in your browser’s zone; change in Preferences' : 'Change in Preferences'}
      className={LINK}
      data-testid="time-zone-link"
    >
      <svg aria-hidden viewBox="0 0 16 16" className="h-3.5 w-3.5" fill="none" stroke="currentColor" strokeWidth="1.5">
        <circle cx="8" cy="8" r="6.25" />
        <path d="M8 4.5V8l2.5 1.5" />
      </svg>
      <span className="sr-only">Times in </span>
      {zone}
    </Link>
  );
}
