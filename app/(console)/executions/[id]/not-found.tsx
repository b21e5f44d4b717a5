import { NotFoundNotice } from '@/components/shell/not-found-notice';

/** An execution id that names no execution (HTTP 404). */
export default function ExecutionNotFound() {
  return (
    <NotFoundNotice
      what="execution"
      why="No execution of the runtime has the id in this address."
      lists={[{ href: '/executions', label: 'All executions' }]}
    />
  );
}
