import type { Refusal } from '../actions/use-server-action';
import { TextAreaField } from '../ui/text-area-field';

/**
 * Why a takeover or an abandon is asked for: required, kept on the proposal and in the
 * audit log, and shown to the approver. Not a native `required` field: an empty one is
 * sent, so the server's refusal (REASON_REQUIRED's message) is what the requester reads.
 */
export function RequestReasonField({
  id,
  value,
  onChange,
  error,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
}) {
  return (
    <TextAreaField
      id={id}
      label="Reason for the request (required, shown to the approver)"
      value={value}
      onChange={onChange}
      maxLength={500}
      required="announced"
      error={error}
    />
  );
}

/**
 * What a refused proposal request says about its reason field
 * (`reason`, or an abandon's `note`), from the schema or the service.
 */
export function reasonError(lastError: Refusal | null, field: 'reason' | 'note' = 'reason'): string | undefined {
  if (!lastError) return undefined;
  return lastError.fieldErrors?.[field]?.[0] ?? (lastError.code === 'REASON_REQUIRED' ? lastError.message : undefined);
}
