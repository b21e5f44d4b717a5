/** Per-account sign-in lockout (lib/domain/sign-in-lockout.ts holds the policy), shared by every Keel process. */
export interface SignInLockout {
  /** Milliseconds the username stays locked; a refusal while locked is audited. */
  refuseIfLocked(username: string, now: Date, requestId?: string | null): Promise<number>;
  recordFailure(username: string, now: Date, requestId?: string | null): Promise<{ locked: boolean; lockMs: number }>;
  recordSuccess(username: string): Promise<void>;
}
