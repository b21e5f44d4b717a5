import { Cell, DataTable } from '../ui/table';

const HIDDEN = new Set(['digestHex', 'markers']);

function display(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The evidence the digest binds, as stored with the proposal: one row per field. */
export function EvidenceTable({ evidence }: { evidence: Record<string, unknown> }) {
  const rows = Object.entries(evidence).filter(([key]) => !HIDDEN.has(key));
  return (
    <DataTable caption="Evidence" head={['Field', 'Value']} empty={rows.length === 0}>
      {rows.map(([key, value]) => (
        <tr key={key}>
          <Cell mono>{key}</Cell>
          <Cell mono>{display(value)}</Cell>
        </tr>
      ))}
    </DataTable>
  );
}
