import { NotFoundNotice } from '@/components/shell/not-found-notice';

/** A bulk job id that names no job (HTTP 404). */
export default function BulkReplayNotFound() {
  return (
    <NotFoundNotice
      what="bulk replay"
      why="No bulk replay job has the id in this address."
      lists={[{ href: '/settlements/bulk', label: 'All bulk replays' }]}
    />
  );
}
