/** The note a settlement action carries into the audit log; required for replay and discard. */
export function NoteField({
  id,
  value,
  onChange,
  required,
  error,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  required?: boolean;
  error?: string;
}) {
  return (
    <div>
      <label htmlFor={id} className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
        Note {required ? '(required, kept in the audit log)' : '(optional, kept in the audit log)'}
      </label>
      <textarea
        id={id}
        value={value}
        required={required}
        maxLength={2_000}
        rows={3}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => onChange(e.target.value)}
        className="mt-1 block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 dark:bg-zinc-950"
      />
      {error ? (
        <p id={`${id}-error`} className="mt-1 text-xs text-red-700 dark:text-red-400">
          {error}
        </p>
      ) : null}
    </div>
  );
}
