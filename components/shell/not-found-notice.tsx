import Link from 'next/link';

const LINK = 'font-medium text-sky-800 underline dark:text-sky-300';

/**
 * What a console page says, inside the console, when the thing its address names does
 * not exist (HTTP 404): what is missing, why that may be, and the lists it belongs to.
 * A server component: the id is in the address bar, so no browser code is needed.
 */
export function NotFoundNotice({
  what,
  why,
  lists,
}: {
  what: string;
  why: string;
  lists: { href: string; label: string }[];
}) {
  return (
    <section
      aria-labelledby="not-found-title"
      className="max-w-xl rounded-lg border border-zinc-200 bg-white p-6 dark:border-zinc-800 dark:bg-zinc-900"
    >
      <p className="font-mono text-sm text-zinc-600 dark:text-zinc-400">404 NOT FOUND</p>
      <h1 id="not-found-title" className="mt-1 text-2xl font-semibold tracking-tight">
        No such {what}
      </h1>
      <p className="mt-2 text-sm">{why}</p>
      <ul className="mt-4 flex flex-wrap gap-4 text-sm">
        {lists.map((list) => (
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
