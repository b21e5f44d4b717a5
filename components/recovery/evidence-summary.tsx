import type { ReactNode } from 'react';
import { exactMs, humanDuration, thresholdPhrase } from '@/lib/domain/duration';
import type { BatchEvidenceView, EvidenceView, OrchestrationEvidenceView } from '@/lib/domain/recovery-evidence-view';
import { Fact } from '../ui/fact';
import { StatusBadge } from '../ui/status-badge';
import { TimeAgo } from '../ui/time-ago';
import { ZonedTime } from '../ui/time-zone';
import { MARKERS, OWNER_MEANINGS } from './evidence-meanings';

const note = 'mt-0.5 block text-xs text-zinc-600 dark:text-zinc-400';

/** One labelled value with a sentence that says what it means (inside a <dl>). */
function Item({ label, children, meaning }: { label: string; children: ReactNode; meaning?: ReactNode }) {
  return (
    <Fact label={label}>
      {children}
      {meaning ? <span className={note}>{meaning}</span> : null}
    </Fact>
  );
}

export interface EvidenceSettings {
  staleThresholdMs: number;
  maxClockSkewMs: number;
}

function BatchEvidence({
  view,
  now,
  stepName,
  settings,
}: {
  view: BatchEvidenceView;
  now: Date;
  stepName: string | null;
  settings: EvidenceSettings;
}) {
  const threshold = view.staleThresholdMs ?? settings.staleThresholdMs;
  const skew = view.maxClockSkewMs ?? settings.maxClockSkewMs;
  const read = new Date(view.serverTimeMs);
  const owner = OWNER_MEANINGS[view.owner];
  const step = view.latestStep;
  return (
    <>
      <dl className="grid grid-cols-1 gap-x-6 gap-y-4 md:grid-cols-3">
        <Item
          label="Last update"
          meaning={
            <>
              Read at <ZonedTime at={read} />, by the database’s clock.
            </>
          }
        >
          <TimeAgo at={new Date(view.updatedAtMs)} now={now} />
        </Item>
        <Item
          label="Inactive for"
          meaning={
            view.status === 'UNKNOWN' ? (
              <>
                An UNKNOWN execution needs recovery however long it was quiet; the threshold (
                {thresholdPhrase(threshold)}) does not apply.
              </>
            ) : (
              <>
                Stale means {thresholdPhrase(threshold)}: {view.inactivityMs > threshold ? 'above' : 'not above'} the
                threshold when read.
              </>
            )
          }
        >
          <strong title={exactMs(view.inactivityMs)}>{humanDuration(view.inactivityMs)}</strong>
        </Item>
        <Item
          label="Server clock offset"
          meaning={
            <>
              Keel’s clock against the database’s; at most {humanDuration(skew)} is accepted.
              {view.observationWindowMs !== null ? (
                <> The read took {humanDuration(view.observationWindowMs)}.</>
              ) : null}
            </>
          }
        >
          {view.clockOffsetMs === null ? (
            'not recorded'
          ) : (
            <span title={exactMs(view.clockOffsetMs)}>{humanDuration(view.clockOffsetMs)}</span>
          )}
        </Item>
        <Item label="Owner" meaning={owner.meaning}>
          {owner.label}
        </Item>
        <Item
          label="Latest step"
          meaning={
            step === null ? (
              'The execution has no step yet.'
            ) : step.checkpoint === null ? (
              'No checkpoint committed yet.'
            ) : (
              <>
                Checkpoint {step.checkpoint.schemaId} v{step.checkpoint.schemaVersion}, format{' '}
                {step.checkpoint.formatVersion}, {step.checkpoint.encodedLen} B.
              </>
            )
          }
        >
          {step === null ? (
            'none'
          ) : (
            <>
              {stepName ?? 'step'} <span className="text-zinc-600 dark:text-zinc-400">#{step.id}</span>{' '}
              <StatusBadge status={step.status} />
            </>
          )}
        </Item>
        <Item
          label="Execution"
          meaning={
            <>
              Attempt {view.attempt}, version {view.version}: a confirmation must still find this version.
            </>
          }
        >
          {view.executionId} <StatusBadge status={view.status} />
        </Item>
      </dl>
      <ul aria-label="Markers" className="mt-5 space-y-2">
        {MARKERS.map((marker) => {
          const set = view.markers[marker.key];
          return (
            <li
              key={marker.key}
              className={
                'flex flex-wrap items-baseline gap-x-3 gap-y-1 rounded-md border-l-4 p-2 text-sm ' +
                (set
                  ? 'border-amber-500 bg-amber-50 text-amber-950 dark:bg-amber-950 dark:text-amber-50'
                  : 'border-zinc-200 dark:border-zinc-700')
              }
            >
              <span className="w-12 shrink-0 text-xs font-semibold uppercase">{set ? 'Set' : 'Clear'}</span>
              <span className="w-56 max-w-full shrink-0 font-mono text-xs break-all">{marker.code}</span>
              <span className={`min-w-0 flex-1 basis-48 ${set ? '' : 'text-zinc-600 dark:text-zinc-400'}`}>
                {set ? marker.set : marker.clear}
              </span>
            </li>
          );
        })}
      </ul>
    </>
  );
}

function OrchestrationEvidence({
  view,
  now,
  successorOwner,
}: {
  view: OrchestrationEvidenceView;
  now: Date;
  successorOwner: string | null;
}) {
  const expiry = new Date(view.expiresAtMs);
  return (
    <dl className="grid grid-cols-1 gap-x-6 gap-y-4 md:grid-cols-3">
      <Item
        label="Lease owner"
        meaning="The orchestrator whose lease lapsed; it can no longer save a checkpoint once the token moves on."
      >
        {view.leaseOwner}
      </Item>
      <Item
        label="Fencing token"
        meaning={
          <>
            The takeover hands {successorOwner ?? 'the successor'} token {view.fencingToken + 1}.
          </>
        }
      >
        {view.fencingToken}
      </Item>
      <Item
        label="Lease expiry"
        meaning={
          view.serverTimeMs === null ? (
            'By the database’s clock.'
          ) : (
            <>
              Expired {humanDuration(view.serverTimeMs - view.expiresAtMs)} before the evidence was read (
              <ZonedTime at={view.serverTimeMs} />
              ).
            </>
          )
        }
      >
        <TimeAgo at={expiry} now={now} />
      </Item>
    </dl>
  );
}

/** The takeover evidence as an approver weighs it: times in words, the owner and each marker with its meaning. */
export function EvidenceSummary(props: {
  view: EvidenceView;
  now: Date;
  stepName: string | null;
  settings: EvidenceSettings;
  successorOwner: string | null;
}) {
  return props.view.kind === 'batch' ? (
    <BatchEvidence view={props.view} now={props.now} stepName={props.stepName} settings={props.settings} />
  ) : (
    <OrchestrationEvidence view={props.view} now={props.now} successorOwner={props.successorOwner} />
  );
}
