/**
 * Runs work in one transaction with every port of `Ports` bound to it. It commits
 * whatever the work wrote when the work returns (a refusal returns too, so its audit
 * event and any status change it made commit), and rolls everything back when the
 * work throws. The one unit of work of every service: recovery, users, settlements.
 */
export interface UnitOfWork<Ports> {
  transaction<T>(work: (ports: Ports) => Promise<T>): Promise<T>;
}
