'use client';

import { useRouter } from 'next/navigation';
import { useEffect, useState, type FormEvent } from 'react';
import { setTimeZoneAction } from '@/app/actions/preferences';
import { parseTimeZonePreference, TIME_ZONE_MESSAGE } from '@/lib/domain/time-zone';
import { useServerAction } from '../actions/use-server-action';
import { Button } from '../ui/button';
import { useTimeZone } from '../ui/time-zone';

type Choice = 'utc' | 'browser' | 'named';

const FIELD =
  'mt-1 block w-72 max-w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm ' +
  'dark:border-zinc-700 dark:bg-zinc-950';
const HINT = 'text-xs text-zinc-600 dark:text-zinc-400';

/**
 * Where this user sees times: UTC, the browser's zone, or a named zone. Stored on the
 * server (it follows the user to any browser) and audited; the page re-renders in the new
 * zone once it is saved. The name is checked here with the action's own rule
 * (parseTimeZonePreference) and again on the server.
 */
export function TimeZoneForm() {
  const tz = useTimeZone();
  const router = useRouter();
  const initial: Choice = tz.preference === 'utc' || tz.preference === 'browser' ? tz.preference : 'named';
  const [choice, setChoice] = useState<Choice>(initial);
  const [error, setError] = useState<string | null>(null);
  // Known only in the browser: its zone and the names it knows (the server's list may differ).
  const [browser, setBrowser] = useState<{ zone: string; names: string[] } | null>(null);
  useEffect(() => {
    const names = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
    setBrowser({ zone: Intl.DateTimeFormat().resolvedOptions().timeZone, names });
  }, []);
  const save = useServerAction(setTimeZoneAction, {
    success: (value) =>
      value.changed
        ? `Times are now shown in ${describe(value.timeZone)}`
        : `Times were already shown in ${describe(value.timeZone)}`,
    shownInline: (refusal) => refusal.code === 'INVALID_INPUT',
    onSuccess: () => router.refresh(),
  });
  const shownError = error ?? (save.lastError?.code === 'INVALID_INPUT' ? TIME_ZONE_MESSAGE : null);

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const timeZone = choice === 'named' ? String(form.get('zoneName') ?? '').trim() : choice;
    if (parseTimeZonePreference(timeZone) === null) {
      setError(TIME_ZONE_MESSAGE);
      return;
    }
    setError(null);
    void save.execute({ timeZone });
  }

  const option = (value: Choice, label: string, hint: string) => (
    <label className="flex items-start gap-2 text-sm">
      <input
        type="radio"
        name="choice"
        value={value}
        checked={choice === value}
        onChange={() => setChoice(value)}
        className="mt-1"
      />
      <span>
        <span className="font-medium">{label}</span>
        <span className={`block ${HINT}`}>{hint}</span>
      </span>
    </label>
  );

  return (
    <form onSubmit={submit} aria-labelledby="time-zone-heading" className="max-w-xl space-y-4">
      <fieldset className="space-y-3">
        <legend id="time-zone-heading" className="mb-2 text-base font-semibold">
          Time zone
        </legend>
        <p className={HINT}>
          Tables, charts, date filters and the audit CSV show times in this zone. It is kept with your account, so it
          follows you to any browser. Links you share keep exact times, so they show the same moments to anyone.
        </p>
        {option('utc', 'UTC', 'The same for everyone; the servers’ and the logs’ zone.')}
        {option(
          'browser',
          'This browser’s zone',
          browser
            ? `Here: ${browser.zone}. Another browser uses its own.`
            : 'Whatever zone the browser you use is set to.',
        )}
        {option('named', 'A zone of my choice', 'Always this zone, wherever you are.')}
        <div className="pl-6">
          <label htmlFor="time-zone-name" className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
            Zone name (IANA, such as Europe/Berlin)
          </label>
          <input
            id="time-zone-name"
            name="zoneName"
            list="time-zone-names"
            autoComplete="off"
            spellCheck={false}
            defaultValue={initial === 'named' ? tz.preference : ''}
            disabled={choice !== 'named'}
            aria-invalid={shownError ? true : undefined}
            aria-describedby={shownError ? 'time-zone-error' : undefined}
            className={`${FIELD} disabled:opacity-60`}
          />
          <datalist id="time-zone-names">
            {browser?.names.map((name) => (
              <option key={name} value={name} />
            ))}
          </datalist>
          {shownError ? (
            <p id="time-zone-error" role="alert" className="mt-1 text-xs text-red-700 dark:text-red-400">
              {shownError}
            </p>
          ) : null}
        </div>
      </fieldset>
      <p className={HINT} data-testid="time-zone-now">
        Now shown in{' '}
        <span className="font-medium text-zinc-900 dark:text-zinc-100">{describe(tz.preference, tz.zone)}</span>.
      </p>
      <Button type="submit" variant="primary" disabled={save.pending}>
        {save.pending ? 'Saving…' : 'Save time zone'}
      </Button>
    </form>
  );
}

function describe(preference: string, zone?: string): string {
  if (preference === 'utc') return 'UTC';
  if (preference === 'browser') return zone ? `this browser’s zone (${zone})` : 'this browser’s zone';
  return preference;
}
