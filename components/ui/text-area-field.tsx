export interface TextAreaFieldProps {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  maxLength: number;
  /**
   * `native`: the browser refuses an empty field; `announced`: an empty one is sent and the server's refusal is shown.
   */
  required?: 'native' | 'announced';
  error?: string;
}

/** A labelled text area for a reason or a note, with its error tied to it for assistive technology. */
export function TextAreaField({ id, label, value, onChange, maxLength, required, error }: TextAreaFieldProps) {
  return (
    <div>
      <label htmlFor={id} className="block text-xs font-medium text-zinc-700 dark:text-zinc-300">
        {label}
      </label>
      <textarea
        id={id}
        value={value}
        required={required === 'native'}
        aria-required={required === 'announced' ? true : undefined}
        maxLength={maxLength}
        rows={3}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => onChange(e.target.value)}
        className={
          'mt-1 block w-full rounded-md border border-zinc-300 bg-white px-2 py-1.5 text-sm dark:border-zinc-700 ' +
          'dark:bg-zinc-950'
        }
      />
      {error ? (
        <p
          id={`${id}-error`}
          role={required === 'announced' ? 'alert' : undefined}
          className="mt-1 text-xs text-red-700 dark:text-red-400"
        >
          {error}
        </p>
      ) : null}
    </div>
  );
}
