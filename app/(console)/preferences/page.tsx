import type { Metadata } from 'next';
import { TimeZoneForm } from '@/components/preferences/time-zone-form';
import { PageHeader } from '@/components/ui/page-header';
import { page } from '@/lib/server/page';

export const metadata: Metadata = { title: 'Preferences' };

/** Each user's own settings, for every role (docs/console.md#time-zone). */
export default page('read', {}, function PreferencesPage() {
  return (
    <>
      <PageHeader title="Preferences" description="How the console shows things to you. Only you are affected." />
      <section className="rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900">
        <TimeZoneForm />
      </section>
    </>
  );
});
