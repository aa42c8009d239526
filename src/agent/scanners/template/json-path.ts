// The part of jq that nuclei's `json` extractors use (gojq): paths of fields and indexes joined by
// dots and pipes — `.version`, `.data.token`, `.["odd key"]`, `.items[0]`, `.items[]`,
// `.[] | .name`. Each result is printed as gojq prints it: strings bare, anything else as JSON.
// Other jq (functions, select, arithmetic) is refused at validation with the expression named.

type Step = { k: 'field'; name: string } | { k: 'index'; i: number } | { k: 'each' };
export type JsonPath = Step[];

export function parseJsonPath(src: string): JsonPath {
  const steps: Step[] = [];
  let s = src.trim();
  if (!s.startsWith('.')) throw new Error('must start with . (e.g. .version or .items[].name)');
  while (s.length) {
    if (s.startsWith('|')) {
      s = s.slice(1).trim();
      if (!s.startsWith('.')) throw new Error('each part after | must start with .');
      continue;
    }
    let m: RegExpExecArray | null;
    if ((m = /^\.?\[\s*"((?:[^"\\]|\\.)*)"\s*\]/.exec(s)))
      steps.push({ k: 'field', name: JSON.parse(`"${m[1]}"`) as string });
    else if ((m = /^\.?\[\s*(-?\d+)\s*\]/.exec(s))) steps.push({ k: 'index', i: Number(m[1]) });
    else if ((m = /^\.?\[\s*\]/.exec(s))) steps.push({ k: 'each' });
    else if ((m = /^\.([A-Za-z_][A-Za-z0-9_]*)/.exec(s))) steps.push({ k: 'field', name: m[1]! });
    else if ((m = /^\.(?=\s*(?:\||$))/.exec(s))) {
      // `.` alone: the value itself.
    } else
      throw new Error(
        `${JSON.stringify(s.slice(0, 30))} is outside the supported jq paths (.a.b, .a[0], .a[], .["k"], |)`,
      );
    s = s.slice(m[0].length).trim();
  }
  return steps;
}

function apply(values: unknown[], step: Step): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (step.k === 'field') {
      if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.hasOwn(v, step.name))
        out.push((v as Record<string, unknown>)[step.name]);
      else if (v === null || (typeof v === 'object' && !Array.isArray(v))) out.push(null);
    } else if (step.k === 'index') {
      if (Array.isArray(v)) out.push(v[step.i < 0 ? v.length + step.i : step.i] ?? null);
    } else if (Array.isArray(v)) out.push(...v);
    else if (v !== null && typeof v === 'object') out.push(...Object.values(v));
  }
  return out;
}

/** Values of a path in a JSON document (none when the text is not JSON); null results are dropped. */
export function extractJson(path: JsonPath, doc: unknown): string[] {
  let values: unknown[] = [doc];
  for (const step of path) values = apply(values, step);
  return values
    .filter((v) => v !== null && v !== undefined)
    .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}
