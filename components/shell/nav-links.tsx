'use client';

import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { can, type Role } from '@/lib/domain/roles';
import { NeedsYouCount } from './needs-you-count';

const LINKS = [
  { href: '/', label: 'Overview' },
  { href: '/rates', label: 'Rates' },
  { href: '/executions', label: 'Executions' },
  { href: '/retry-keys', label: 'Retry keys' },
  { href: '/recovery', label: 'Recovery' },
  { href: '/settlements', label: 'Settlements' },
  { href: '/audit', label: 'Audit' },
];

/** Shown only to roles that may use them; the pages check the role again on the server. */
const ROLE_LINKS = [
  { href: '/users', label: 'Users', permission: 'manageUsers' },
  { href: '/webhooks', label: 'Webhooks', permission: 'manageWebhooks' },
] as const;

export function NavLinks({ role }: { role: Role }) {
  const pathname = usePathname();
  const links = [...LINKS, ...ROLE_LINKS.filter((link) => can(role, link.permission))];
  return (
    <ul className="space-y-1">
      {links.map((link) => {
        const active = link.href === '/' ? pathname === '/' : pathname.startsWith(link.href);
        return (
          <li key={link.href}>
            <Link
              href={link.href}
              aria-current={active ? 'page' : undefined}
              className={`flex items-center gap-2 rounded-md px-3 py-2 text-sm ${
                active
                  ? 'bg-sky-100 font-medium text-sky-900 dark:bg-sky-950 dark:text-sky-100'
                  : 'text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800'
              }`}
            >
              {link.label}
              {link.href === '/' ? <NeedsYouCount /> : null}
            </Link>
          </li>
        );
      })}
    </ul>
  );
}
