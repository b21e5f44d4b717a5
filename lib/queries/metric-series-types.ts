// The overview charts' series as the browser receives them: client-safe, so components may import them.

export interface Series {
  name: string;
  points: { at: string; value: number }[];
}
