import { TextAreaField } from '../ui/text-area-field';

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
    <TextAreaField
      id={id}
      label={`Note ${required ? '(required, kept in the audit log)' : '(optional, kept in the audit log)'}`}
      value={value}
      onChange={onChange}
      maxLength={2_000}
      required={required ? 'native' : undefined}
      error={error}
    />
  );
}
