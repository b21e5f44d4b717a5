import type { GoverningSnapshots } from '@/lib/domain/checkpoint-model';
import { CopyButton } from '../ui/copy-button';

const SNAPSHOTS: { field: keyof GoverningSnapshots; label: string }[] = [
  { field: 'proposalDigest', label: 'Proposal' },
  { field: 'manifestDigest', label: 'Manifest' },
  { field: 'registryDigest', label: 'Registry' },
  { field: 'policyDigest', label: 'Policy' },
  { field: 'authorizationDigest', label: 'Authorization' },
];

/** The five digests a recovery must match exactly; full values, wrapped, each with a copy button. */
export function SnapshotDigests({ snapshots }: { snapshots: GoverningSnapshots }) {
  return (
    <dl className="grid grid-cols-1 gap-3">
      {SNAPSHOTS.map(({ field, label }) => (
        <div key={field}>
          <dt className="text-xs font-medium uppercase tracking-wide text-zinc-600 dark:text-zinc-400">{label}</dt>
          <dd className="mt-0.5 flex flex-wrap items-center">
            <code className="break-all font-mono text-sm">{snapshots[field]}</code>
            <CopyButton value={snapshots[field]} label={`Copy ${label.toLowerCase()} digest`} />
          </dd>
        </div>
      ))}
    </dl>
  );
}
