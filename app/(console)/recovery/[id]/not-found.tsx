import { NotFoundNotice } from '@/components/shell/not-found-notice';

/** A proposal id that names no proposal, or is no number (HTTP 404). */
export default function ProposalNotFound() {
  return (
    <NotFoundNotice
      what="recovery proposal"
      why="No recovery proposal has the id in this address; proposal ids are whole numbers."
      lists={[{ href: '/recovery', label: 'All recovery proposals' }]}
    />
  );
}
