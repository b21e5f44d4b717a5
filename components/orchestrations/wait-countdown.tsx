'use client';

import { ZonedTime } from '../ui/time-zone';
import { useServerClock } from '../ui/use-server-clock';

const two = (n: number) => String(n).padStart(2, '0');

/** "2 h 05 min 09 s left", or minutes and seconds under an hour. */
export function timeLeft(leftMs: number): string {
  if (leftMs <= 0) return 'deadline passed';
  const seconds = Math.floor(leftMs / 1000);
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return hours > 0
    ? `${hours} h ${two(minutes)} min ${two(seconds % 60)} s left`
    : `${minutes} min ${two(seconds % 60)} s left`;
}

/**
 * Time left until a wait's deadline, ticking every second against the server's clock at load
 * (the browser's own clock may be off). A wake at the deadline itself is still on time.
 */
export function WaitCountdown({ deadline, serverNow }: { deadline: string; serverNow: string }) {
  const now = useServerClock(serverNow);
  const left = new Date(deadline).getTime() - now;
  return (
    <span data-testid="wait-countdown">
      {/* The server renders it a moment earlier than the browser hydrates it. */}
      <span
        suppressHydrationWarning
        className={left <= 60_000 ? 'font-medium text-red-800 dark:text-red-300' : 'font-medium'}
      >
        {timeLeft(left)}
      </span>{' '}
      <span className="text-zinc-600 dark:text-zinc-400">
        (<ZonedTime at={new Date(deadline)} />)
      </span>
    </span>
  );
}
