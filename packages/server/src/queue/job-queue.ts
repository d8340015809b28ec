/**
 * The job queue port (STYLE habit 4). A queue only announces "job X may be runnable"; the store
 * decides who runs it (a lease in `cloud_jobs`, batch/leases.ts) and `settleJob` decides the
 * outcome once. So announcements may be lost or repeated without harm: workers also scan the store,
 * which is what resumes jobs left behind by a dead process.
 */
export type JobHandler = (jobId: string) => Promise<void>;

export interface JobQueue {
  readonly name: string;
  /** Announces a job (at least once, possibly more). */
  enqueue(jobId: string): Promise<void>;
  /** Starts consuming announcements with at most `concurrency` handlers running. */
  work(handler: JobHandler, opts: { concurrency: number }): Promise<void>;
  stop(): Promise<void>;
}
