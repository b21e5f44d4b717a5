'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { singleDestination } from '@/lib/queries/search-types';
import { searchResultsQuery } from '@/lib/reads/queries';
import { searchPageHref } from '@/lib/url-state/search';
import { CONSOLE_SEARCH_ID } from './shortcut-keys';

/**
 * Find anything by its id, from every page: one match opens it, several are listed on
 * /search by kind. Escape leaves the box. The answer is kept under the results page's
 * key, so the page that lists the matches renders them without asking again.
 */
export function SearchBox({ className = '' }: { className?: string }) {
  const router = useRouter();
  const client = useQueryClient();
  const [pending, setPending] = useState(false);

  async function find(q: string) {
    setPending(true);
    try {
      const results = await client.fetchQuery({ ...searchResultsQuery.options({ q }), staleTime: 5_000 });
      router.push(singleDestination(results) ?? searchPageHref(q));
    } catch {
      // The results page asks again and names the problem (a field error, a busy database).
      router.push(searchPageHref(q));
    } finally {
      setPending(false);
    }
  }

  return (
    <form
      role="search"
      aria-label="Find by id"
      className={className}
      onSubmit={(event) => {
        event.preventDefault();
        const value = new FormData(event.currentTarget).get('q');
        const q = typeof value === 'string' ? value.trim() : '';
        if (q) void find(q);
      }}
    >
      <input
        id={CONSOLE_SEARCH_ID}
        name="q"
        type="search"
        aria-label="Find by id"
        aria-describedby={`${CONSOLE_SEARCH_ID}-hint`}
        aria-busy={pending}
        autoComplete="off"
        spellCheck={false}
        placeholder="Find by id (press /)"
        onKeyDown={(event) => {
          if (event.key === 'Escape') {
            event.preventDefault();
            event.currentTarget.blur();
          }
        }}
        className={
          'w-full rounded-md border border-zinc-300 bg-white px-2.5 py-1 text-sm placeholder:text-zinc-500 ' +
          'dark:border-zinc-700 dark:bg-zinc-950 dark:placeholder:text-zinc-400'
        }
      />
      <span id={`${CONSOLE_SEARCH_ID}-hint`} className="sr-only">
        An execution, job instance, proposal or operation id, a receipt id or its start, or 8 or more hex digits of a
        retry key or digest. Enter searches.
      </span>
    </form>
  );
}
