'use client';

import { useEffect, useState } from 'react';

/**
 * The server's time now, ticking every second: the browser's clock taken at the offset
 * the server's clock had when the page loaded (the browser's own may be off). For
 * countdowns to deadlines the server set.
 */
export function useServerClock(serverNow: string): number {
  const [offsetMs] = useState(() => new Date(serverNow).getTime() - Date.now());
  const [now, setNow] = useState(() => Date.now() + offsetMs);
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now() + offsetMs), 1_000);
    return () => clearInterval(timer);
  }, [offsetMs]);
  return now;
}
