'use client';

import { useRouter } from 'next/navigation';
import { useTransition } from 'react';
import { signOut } from '@/app/actions/session';

export function SignOutButton() {
  const router = useRouter();
  const [pending, start] = useTransition();
  return (
    <button
      type="button"
      disabled={pending}
      onClick={() =>
        start(async () => {
          const result = await signOut({});
          // A single sign-on user ends the provider's session too; the provider sends them back to /sign-in.
          if (result.ok && result.value.providerSignOutUrl) {
            window.location.assign(result.value.providerSignOutUrl);
            return;
          }
          router.replace('/sign-in');
          router.refresh();
        })
      }
      className={
        'rounded-md border border-zinc-300 px-2.5 py-1 text-sm hover:bg-zinc-100 dark:border-zinc-700 ' +
        'dark:hover:bg-zinc-800'
      }
    >
      Sign out
    </button>
  );
}
