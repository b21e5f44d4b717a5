/**
 * Why a takeover is asked for: required, kept on the proposal and in the audit log,
 * and shown to the approver. Not a native `required` field: an empty one is sent, so
 * the server's refusal (REASON_REQUIRED's message) is what the requester reads.
 */
export function RequestReasonField({ id, value, onChange, error }: { id: string; value: string; onChange: (value: string) => void; error?: string }) {
  return (
    <div>
      <label htmlFor={id} className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
        Reason for the request (required, shown to the approver)
      </label>
      <textarea
        id={id}
        value={value}
        aria-required="true"
        maxLength={500}
        rows={3}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => onChange(e.target.value)}
        className="mt-1 block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950"
      />
      {error ? (
        <p id={`${id}-error`} role="alert" className="mt-1 text-xs text-red-700 dark:text-red-400">
          {error}
        </p>
      ) : null}
    </div>
  );
}

/** What a refused proposal request says about its reason field, from the schema or the service. */
export function reasonError(lastError: { code: string; message: string; fieldErrors?: Record<string, string[]> } | null): string | undefined {
  if (!lastError) return undefined;
  return lastError.fieldErrors?.reason?.[0] ?? (lastError.code === 'REASON_REQUIRED' ? lastError.message : undefined);
}
