'use client';

import { ZonedTime } from '../ui/time-zone';
import { useServerClock } from '../ui/use-server-clock';

/** Time left until a deadline, ticking every second against the server's clock at load. */
export function DeadlineCountdown({ deadline, serverNow }: { deadline: string; serverNow: string }) {
  const now = useServerClock(serverNow);
  const left = new Date(deadline).getTime() - now;
  const text =
    left <= 0
      ? 'deadline passed'
      : `${Math.floor(left / 60_000)} min ${String(Math.floor((left % 60_000) / 1000)).padStart(2, '0')} s left`;
  return (
    <span data-testid="deadline">
      <span className={left <= 60_000 ? 'font-medium text-red-800 dark:text-red-300' : ''}>{text}</span>{' '}
      <span className="text-zinc-600 dark:text-zinc-400">
        (<ZonedTime at={new Date(deadline)} />)
      </span>
    </span>
  );
}
