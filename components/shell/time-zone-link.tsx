'use client';

import Link from 'next/link';
import { useTimeZone } from '../ui/time-zone';

const LINK =
  'text-sm text-zinc-700 underline decoration-dotted underline-offset-2 hover:text-sky-800 ' +
  'dark:text-zinc-300 dark:hover:text-sky-300';

/** The zone every time is shown in, in the header, linking to where it is changed. */
export function TimeZoneLink() {
  const { zone, preference } = useTimeZone();
  return (
    <Link
      href="/preferences"
      prefetch={false}
      title={preference === 'browser' ? 'Your browser’s zone; change it in Preferences' : 'Change it in Preferences'}
      className={LINK}
      data-testid="time-zone-link"
    >
      Times in {zone}
    </Link>
  );
}
