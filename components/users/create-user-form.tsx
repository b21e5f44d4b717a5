'use client';

import { useState, type FormEvent } from 'react';
import { ROLES, type Role } from '@/lib/domain/roles';
import { checkNewUser } from '@/lib/domain/new-user-check';
import { Button } from '../ui/button';

export interface NewUserDraft {
  username: string;
  name: string;
  role: Role;
  /** The form's fields as the action takes them: plain text, never a FormData (lib/http/action-body.ts). */
  fields: Record<string, string>;
}

const FIELD =
  'mt-1 block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 ' +
  'dark:bg-zinc-950';

/**
 * The create-user form. It checks the fields with the action's own rules and messages
 * (checkNewUser) before asking for confirmation; the server parses them again. `operationId` is fixed
 * for this form until it is reset, so a repeated submit creates the user once.
 */
export function CreateUserForm({
  operationId,
  serverErrors,
  onReview,
}: {
  operationId: string;
  serverErrors?: Record<string, string[]>;
  onReview: (draft: NewUserDraft) => void;
}) {
  const [errors, setErrors] = useState<Record<string, string[]>>({});
  const shown = { ...serverErrors, ...errors };

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const fields: Record<string, string> = {};
    for (const [key, value] of new FormData(event.currentTarget)) if (typeof value === 'string') fields[key] = value;
    const checked = checkNewUser(fields);
    if (!checked.ok) {
      setErrors(checked.errors);
      return;
    }
    setErrors({});
    onReview({ ...checked.value, fields });
  }

  const field = (name: 'username' | 'name' | 'password', label: string, props: Record<string, string> = {}) => {
    const error = shown[name]?.[0];
    return (
      <div className="min-w-44 flex-1">
        <label htmlFor={`new-user-${name}`} className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
          {label}
        </label>
        <input
          id={`new-user-${name}`}
          name={name}
          required
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `new-user-${name}-error` : undefined}
          className={FIELD}
          {...props}
        />
        {error ? (
          <p id={`new-user-${name}-error`} className="mt-1 text-xs text-red-700 dark:text-red-400">
            {error}
          </p>
        ) : null}
      </div>
    );
  };

  return (
    <form
      key={operationId}
      onSubmit={submit}
      noValidate
      aria-labelledby="create-user-title"
      className="mb-6 rounded-lg border border-zinc-200 bg-white p-4 dark:border-zinc-800 dark:bg-zinc-900"
    >
      <h2 id="create-user-title" className="mb-3 text-sm font-semibold">
        Create a user
      </h2>
      <input type="hidden" name="operationId" value={operationId} />
      <div className="flex flex-wrap items-start gap-3">
        {field('username', 'Username', { autoComplete: 'off', placeholder: 'a-z, 0-9, _ and .' })}
        {field('name', 'Name', { autoComplete: 'off' })}
        <div className="min-w-36">
          <label htmlFor="new-user-role" className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
            Role
          </label>
          <select id="new-user-role" name="role" defaultValue="viewer" className={FIELD}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </div>
        {field('password', 'Initial password', {
          type: 'password',
          autoComplete: 'new-password',
          placeholder: '8 to 128 characters',
        })}
        <Button type="submit" variant="primary" className="mt-5">
          Create user…
        </Button>
      </div>
    </form>
  );
}
