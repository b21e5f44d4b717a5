/** One sample of Prometheus text exposition: name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** A sample's value: a float, or +Inf, -Inf or NaN as the format spells them. */
const sampleValue = (text: string): number => (text === '+Inf' ? Infinity : text === '-Inf' ? -Infinity : Number(text));

/** Parses exposition text (format 0.0.4); comment lines are skipped, a malformed line throws. */
export function parsePrometheus(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(LABEL))
      labels[key!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value: sampleValue(match[3]!) });
  }
  return samples;
}

/** name{label=value,...} -> value, for the samples of one metric, keyed by one label (or '' when unlabelled). */
export function byLabel(samples: Sample[], name: string, label?: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.name === name) out[label ? (s.labels[label] ?? '') : ''] = s.value;
  return out;
}
