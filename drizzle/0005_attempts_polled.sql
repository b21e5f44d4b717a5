-- NOTIFY serializes every committing transaction that sent one behind one
-- server-wide lock; on the settlement queue, the hottest table, that cost settlement
-- workers several times their throughput. The queue is polled instead (the newest
-- keel.settlement_event id, written with every transition).
DROP TRIGGER attempts_notify ON settle.attempts;
