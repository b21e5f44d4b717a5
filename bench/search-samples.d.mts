import type pg from 'pg';

export function prepareSearchRows(
  client: pg.ClientBase,
  sizes?: { proposals?: number; requests?: number; replays?: number; audit?: number; history?: number },
): Promise<string[]>;
export function searchSamples(
  client: pg.ClientBase,
  options?: { count?: number; username?: string | null },
): Promise<Record<string, string[]>>;
