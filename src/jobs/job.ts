/**
 * A periodic piece of background work a backend (store/open.ts, pg/open.ts) or the server
 * hands the scheduler (jobs/scheduler.ts): a save of what is counted in memory, a sweep, a probe.
 */
export interface Job {
  /** What the job does, for the turn it takes (pg/turns.ts keeps rounds by this name) and for reports. */
  readonly name: string;
  /** How long after one round begins the next is due, on the server's clock. */
  readonly everyMs: number;
  /**
   * Whether one round is done once across the servers sharing the storage: each round first
   * takes the backend's turn (README, Running several instances); the data folder's one server always has it.
   */
  readonly oncePerCluster: boolean;
  /**
   * One round, begun at `now`; `stop` is aborted when the server stops, so a long round
   * (the expiry sweep) can end between two of its steps.
   */
  run(now: number, stop: AbortSignal): Promise<void>;
}
