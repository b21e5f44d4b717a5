import Link from 'next/link';
import type { DeepLinks } from '@/lib/domain/deep-links';

export interface RelatedLink {
  href: string;
  text: string;
}

const LINK = 'text-sky-800 underline dark:text-sky-300';

/**
 * A page's ways on: a link along each relation its data has (filtered lists, the audit trail),
 * then the team's own logs and traces for its id where their URL templates are set
 * (docs/configuration.md#logs-and-traces). Those open in a new tab, saying so to a screen reader.
 */
export function RelatedLinks({
  label,
  links,
  external,
  className = '',
}: {
  label: string;
  links: RelatedLink[];
  external?: DeepLinks;
  className?: string;
}) {
  const outside = [
    external?.logs ? { href: external.logs, text: 'Logs' } : null,
    external?.traces ? { href: external.traces, text: 'Traces' } : null,
  ].filter((l) => l !== null);
  return (
    <nav aria-label={label} className={`text-sm ${className}`}>
      <ul className="flex flex-wrap gap-x-4 gap-y-1">
        {links.map((l) => (
          <li key={l.href}>
            <Link href={l.href} prefetch={false} className={LINK}>
              {l.text}
            </Link>
          </li>
        ))}
        {outside.map((l) => (
          <li key={l.text}>
            <a href={l.href} target="_blank" rel="noopener noreferrer" className={LINK}>
              {l.text}
              <span aria-hidden="true"> ↗</span>
              <span className="sr-only"> (opens in a new tab)</span>
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}
