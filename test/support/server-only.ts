// Lets server modules load under vitest, where there is no React server condition.
export {};
