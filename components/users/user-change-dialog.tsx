'use client';

import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { changeUserRoleAction, createUserAction, disableUserAction, enableUserAction } from '@/app/actions/users';
import { can, type Role } from '@/lib/domain/roles';
import { queryKeys } from '@/lib/query-keys';
import type { UserView } from '@/lib/queries/users-types';
import { ConfirmDialog } from '../ui/confirm-dialog';
import { useToast } from '../ui/toast';
import type { NewUserDraft } from './create-user-form';
import { ROLE_SUMMARY } from './role-summary';

export type UserChange =
  | { kind: 'create'; draft: NewUserDraft }
  | { kind: 'disable'; user: UserView }
  | { kind: 'enable'; user: UserView }
  | { kind: 'role'; user: UserView; role: Role };

type Outcome =
  | { ok: true; title: string; detail?: string; tone?: 'success' | 'info' }
  | { ok: false; code: string; message: string; fieldErrors?: Record<string, string[]> };

async function run(change: UserChange, reason: string): Promise<Outcome> {
  switch (change.kind) {
    case 'create': {
      // The form's text as typed; the action parses it with createUserSchema.
      const r = await createUserAction(change.draft.fields as Parameters<typeof createUserAction>[0]);
      if (!r.ok) return r;
      return r.value.created
        ? {
            ok: true,
            title: `Created ${r.value.user.username}`,
            detail: `Role ${r.value.user.role}. They can sign in now.`,
          }
        : {
            ok: true,
            tone: 'info',
            title: `${r.value.user.username} was already created by this form`,
            detail: 'Nothing changed.',
          };
    }
    case 'disable': {
      const r = await disableUserAction({ username: change.user.username, reason });
      if (!r.ok) return r;
      const sessions = `${r.value.sessionsEnded} session${r.value.sessionsEnded === 1 ? '' : 's'}`;
      return r.value.changed
        ? { ok: true, title: `Disabled ${r.value.user.username}`, detail: `Signed out of ${sessions}.` }
        : {
            ok: true,
            tone: 'info',
            title: `${r.value.user.username} was already disabled`,
            detail: 'Nothing changed.',
          };
    }
    case 'enable': {
      const r = await enableUserAction({ username: change.user.username });
      if (!r.ok) return r;
      return r.value.changed
        ? { ok: true, title: `Enabled ${r.value.user.username}`, detail: 'They can sign in again.' }
        : { ok: true, tone: 'info', title: `${r.value.user.username} was already enabled`, detail: 'Nothing changed.' };
    }
    case 'role': {
      const r = await changeUserRoleAction({
        username: change.user.username,
        role: change.role,
        expectedRole: change.user.role as Role,
      });
      if (!r.ok) return r;
      return r.value.changed
        ? { ok: true, title: `${r.value.user.username} is now ${r.value.user.role}` }
        : {
            ok: true,
            tone: 'info',
            title: `${r.value.user.username} already had the role ${r.value.user.role}`,
            detail: 'Nothing changed.',
          };
    }
  }
}

function describe(change: UserChange): { title: string; confirm: string; tone: 'primary' | 'danger'; body: string[] } {
  switch (change.kind) {
    case 'create':
      return {
        title: `Create user ${change.draft.username}?`,
        confirm: 'Create user',
        tone: 'primary',
        body: [
          `Creates ${change.draft.username} (${change.draft.name}) with the role ${change.draft.role}: ` +
            `${ROLE_SUMMARY[change.draft.role]}.`,
          'They can sign in at once with the initial password you gave. Share it with them privately.',
        ],
      };
    case 'disable':
      return {
        title: `Disable ${change.user.username}?`,
        confirm: 'Disable user',
        tone: 'danger',
        body: [
          `${change.user.username} (${change.user.name}) is signed out at once: every session of theirs ends now.`,
          'They cannot sign in until an admin enables them again. Their role and audit history stay.',
          ...bulkJobsCancelled(change.user),
        ],
      };
    case 'enable':
      return {
        title: `Enable ${change.user.username}?`,
        confirm: 'Enable user',
        tone: 'primary',
        body: [
          `${change.user.username} can sign in again with their existing password, with the role ${change.user.role}.`,
        ],
      };
    case 'role':
      return {
        title: `Change ${change.user.username}'s role?`,
        confirm: `Make ${change.role}`,
        tone: change.role === 'admin' ? 'danger' : 'primary',
        body: [
          `From ${change.user.role} to ${change.role}: ${change.user.username} then ${ROLE_SUMMARY[change.role]}.`,
          'It applies to their next request; they stay signed in.',
          ...(can(change.role, 'replaySettlement') ? [] : bulkJobsCancelled(change.user)),
        ],
      };
  }
}

/**
 * A bulk job acts in its starter's name: the worker cancels it once
 * they may no longer do it (lib/services/bulk-replay-batch.ts).
 */
function bulkJobsCancelled(user: UserView): string[] {
  if (user.runningBulkJobs === 0) return [];
  return [
    user.runningBulkJobs === 1
      ? 'The bulk job running in their name is cancelled at its next batch; what it has done stays done.'
      : `The ${user.runningBulkJobs} bulk jobs running in their name are cancelled at their next batch; ` +
        `what they have done stays done.`,
  ];
}

/** Says exactly what a user change will do, runs it, and reports the outcome (naming the code on refusal). */
export function UserChangeDialog({
  change,
  onClose,
  onApplied,
  onFieldErrors,
}: {
  change: UserChange | null;
  onClose: () => void;
  onApplied: (change: UserChange) => void;
  onFieldErrors: (errors: Record<string, string[]>) => void;
}) {
  const toast = useToast();
  const queryClient = useQueryClient();
  const [pending, setPending] = useState(false);
  const [reason, setReason] = useState('');
  const text = change ? describe(change) : null;

  async function confirm() {
    if (!change) return;
    setPending(true);
    try {
      const outcome = await run(change, reason);
      if (outcome.ok) {
        toast({ tone: outcome.tone ?? 'success', title: outcome.title, detail: outcome.detail });
        onApplied(change);
      } else {
        toast({ tone: 'error', title: `Refused: ${outcome.code}`, detail: outcome.message });
        if (outcome.fieldErrors) onFieldErrors(outcome.fieldErrors);
      }
      // A refusal is audited too, so the audit view changes either way.
      await Promise.all([
        queryClient.invalidateQueries({ queryKey: queryKeys.users.all }),
        queryClient.invalidateQueries({ queryKey: queryKeys.audit.all }),
      ]);
    } catch {
      toast({
        tone: 'error',
        title: 'Could not reach Keel',
        detail: 'Nothing is known to have changed; try again (a repeat is safe).',
      });
    } finally {
      setPending(false);
      setReason('');
      onClose();
    }
  }

  return (
    <ConfirmDialog
      open={change !== null}
      title={text?.title ?? ''}
      confirmLabel={text?.confirm ?? 'Confirm'}
      tone={text?.tone}
      pending={pending}
      onConfirm={confirm}
      onClose={() => !pending && onClose()}
    >
      {text?.body.map((line) => (
        <p key={line}>{line}</p>
      ))}
      {change?.kind === 'disable' ? (
        <div>
          <label htmlFor="disable-reason" className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
            Reason (optional, kept in the audit log)
          </label>
          <textarea
            id="disable-reason"
            value={reason}
            maxLength={500}
            onChange={(e) => setReason(e.target.value)}
            rows={2}
            className={
              'mt-1 block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 ' +
              'dark:bg-zinc-950'
            }
          />
        </div>
      ) : null}
    </ConfirmDialog>
  );
}
