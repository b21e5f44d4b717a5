export function benchCredentials(): { username: string; password: string };
export function signIn(base: string, credentials: { username: string; password: string }): Promise<string>;
export function processCpuMs(pid: number): number;
export function machineCpuMs(): number;
