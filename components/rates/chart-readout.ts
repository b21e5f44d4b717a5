/** The bucket the pointer or the arrow keys are on: its start, each line's value, and the markers within reach. */
export interface ChartReadout {
  bucketMs: number;
  values: (number | null)[];
  markers: string[];
}
