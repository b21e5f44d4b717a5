import type { EvidenceView } from '@/lib/domain/recovery-evidence-view';
import { Cell, DataTable } from '../ui/table';

/**
 * The evidence exactly as stored with the proposal, and the fields its digest binds
 * in the order it binds them, behind one disclosure.
 */
export function EvidenceTable({
  evidence,
  view,
  digest,
}: {
  evidence: Record<string, unknown>;
  view: EvidenceView | null;
  digest: string;
}) {
  return (
    <details className="mt-5 rounded-md border border-zinc-200 dark:border-zinc-800">
      <summary className="cursor-pointer px-3 py-2 text-sm font-medium">Raw evidence and digest input</summary>
      <div className="space-y-4 border-t border-zinc-200 p-3 dark:border-zinc-800">
        {view ? (
          <>
            <p className="text-sm text-zinc-700 dark:text-zinc-300">
              The digest is SHA-256 over these fields in this order: each string as its 8-byte big-endian length then
              its UTF-8 bytes, each integer as 8 bytes big-endian.{' '}
              {view.recomputedDigest === digest ? (
                <strong>Recomputed from them, it equals the proposal’s digest.</strong>
              ) : (
                <strong className="text-red-800 dark:text-red-300">
                  Recomputed from them, it differs from the proposal’s digest ({view.recomputedDigest}).
                </strong>
              )}
            </p>
            <DataTable caption="Digest input" head={['#', 'Field', 'Encoding', 'Value']}>
              {view.digestInputs.map((field, index) => (
                <tr key={field.label}>
                  <Cell>{index}</Cell>
                  <Cell>{field.label}</Cell>
                  <Cell mono>{field.encoding}</Cell>
                  <Cell mono>{String(field.value)}</Cell>
                </tr>
              ))}
            </DataTable>
          </>
        ) : (
          <p className="text-sm">
            The stored evidence does not have the expected shape, so only its raw form is shown.
          </p>
        )}
        <pre
          tabIndex={0}
          aria-label="Stored evidence (JSON)"
          className={
            'max-h-96 overflow-auto rounded-md bg-zinc-100 p-3 font-mono text-xs text-zinc-900 dark:bg-zinc-950 ' +
            'dark:text-zinc-100'
          }
        >
          {JSON.stringify(evidence, null, 2)}
        </pre>
      </div>
    </details>
  );
}
