import type { Metadata } from 'next';
import { cookies, headers } from 'next/headers';
import type { ReactNode } from 'react';
import './globals.css';

export const metadata: Metadata = {
  title: { default: 'Keel', template: '%s · Keel' },
  description: 'Operations console for durable batch and settlement runtimes',
  icons: { icon: '/icon.svg' },
};

// Applies the system preference before first paint when no theme was chosen.
const THEME_SCRIPT =
  '(function(){try{var c=document.cookie.match(/(?:^|; )keel-theme=(light|dark)/);' +
  "var d=c?c[1]==='dark':window.matchMedia('(prefers-color-scheme: dark)').matches;" +
  "document.documentElement.classList.toggle('dark',d);}catch(e){}})();";

// Writes the browser's zone to keel-tz before the first console page is asked for (the sign-in page runs it too), so a
// user whose times follow the browser gets them rendered in it by the server (components/ui/time-zone.tsx).
const TIME_ZONE_SCRIPT =
  "(function(){try{var c='keel-tz='+encodeURIComponent(Intl.DateTimeFormat().resolvedOptions().timeZone);" +
  "if(document.cookie.split('; ').indexOf(c)<0)document.cookie=c+'; path=/; max-age=31536000; samesite=lax';" +
  '}catch(e){}})();';

export default async function RootLayout({ children }: { children: ReactNode }) {
  const theme = (await cookies()).get('keel-theme')?.value;
  // Keel's HTTP server sets a fresh nonce per request (lib/http/front-door.ts);
  // the Content-Security-Policy allows only scripts carrying it.
  const nonce = (await headers()).get('x-nonce') ?? undefined;
  return (
    <html lang="en" className={theme === 'dark' ? 'dark' : undefined} suppressHydrationWarning>
      <head>
        {/* biome-ignore lint/security/noDangerouslySetInnerHtml: a constant script, sent with the CSP nonce */}
        <script nonce={nonce} dangerouslySetInnerHTML={{ __html: THEME_SCRIPT + TIME_ZONE_SCRIPT }} />
      </head>
      <body className="min-h-screen font-sans">{children}</body>
    </html>
  );
}
