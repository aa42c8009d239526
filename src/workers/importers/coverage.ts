// What an imported report says was looked at, kept with the import so that a finding can later be
// closed only by a result that covered its tool, rule and location (docs/report-format.md,
// "Coverage"). Each list is capped; `truncated` says when a cap was reached.
import type { Scanner } from './common.ts';

export interface CoverageTool {
  name: string;
  version: string | null;
  /** The scanner kind its findings are filed under. */
  scanner: Scanner;
  /** The namespace its findings are keyed by (null: rule ids shared across tools). */
  key: string | null;
}

export interface PortRanges {
  protocol: string;
  ranges: [number, number][];
}

export interface CoverageJson {
  tools: CoverageTool[];
  /** Classes of checks that ran: Trivy result classes and scanners, testssl.sh sections, ... */
  classes: string[];
  /**
   * Rule ids: `declared` true when the report lists what it ran (SARIF driver rules, a Nessus
   * plugin set), false when only the rules that reported something are known (nuclei, ZAP).
   */
  rules: { declared: boolean; ids: string[] };
  /** Hosts the report looked at; `up` false for hosts it found down, null when it does not say. */
  hosts: { name: string; up: boolean | null }[];
  /** Port ranges probed (nmap's scaninfo services). */
  ports: PortRanges[];
  /** Scanned targets: images, lockfiles, repositories, sites, artifacts. */
  targets: string[];
  truncated: boolean;
}

const CAPS = { classes: 200, rules: 5_000, hosts: 2_000, targets: 2_000 };

export class Coverage {
  readonly tools: CoverageTool[] = [];
  readonly classes = new Set<string>();
  readonly rules = new Set<string>();
  rulesDeclared = false;
  readonly hosts = new Map<string, boolean | null>();
  readonly ports: PortRanges[] = [];
  readonly targets = new Set<string>();
  truncated = false;

  addTool(t: CoverageTool): void {
    if (!this.tools.some((x) => x.name === t.name && x.version === t.version)) this.tools.push(t);
  }
  #add(set: Set<string>, v: string | undefined, cap: number): void {
    if (!v) return;
    if (set.size >= cap && !set.has(v)) this.truncated = true;
    else set.add(v.slice(0, 500));
  }
  addClass(c: string | undefined): void {
    this.#add(this.classes, c, CAPS.classes);
  }
  addRule(id: string | undefined): void {
    this.#add(this.rules, id, CAPS.rules);
  }
  addTarget(t: string | undefined): void {
    this.#add(this.targets, t, CAPS.targets);
  }
  addHost(name: string | undefined, up: boolean | null = null): void {
    if (!name) return;
    const prior = this.hosts.get(name);
    if (prior === undefined && this.hosts.size >= CAPS.hosts) {
      this.truncated = true;
      return;
    }
    this.hosts.set(name, prior === true || up === true ? true : (up ?? prior ?? null));
  }
  addPorts(protocol: string, ranges: [number, number][]): void {
    const prior = this.ports.find((p) => p.protocol === protocol);
    if (prior) prior.ranges.push(...ranges);
    else this.ports.push({ protocol, ranges: [...ranges] });
  }

  toJSON(): CoverageJson {
    return {
      tools: this.tools,
      classes: [...this.classes].sort(),
      rules: { declared: this.rulesDeclared, ids: [...this.rules].sort() },
      hosts: [...this.hosts].map(([name, up]) => ({ name, up })),
      ports: this.ports.map((p) => ({ protocol: p.protocol, ranges: mergeRanges(p.ranges) })),
      targets: [...this.targets].sort(),
      truncated: this.truncated,
    };
  }
}

/** nmap's "1-1024,3306,5432" style list as ranges (invalid parts ignored). */
export function parsePortList(spec: string): [number, number][] {
  const out: [number, number][] = [];
  for (const part of spec.split(',')) {
    const m = /^\s*(\d{1,5})(?:\s*-\s*(\d{1,5}))?\s*$/.exec(part);
    if (!m) continue;
    const a = Number(m[1]);
    const b = m[2] ? Number(m[2]) : a;
    if (a <= 65_535 && b <= 65_535) out.push(a <= b ? [a, b] : [b, a]);
  }
  return out;
}

function mergeRanges(ranges: [number, number][]): [number, number][] {
  const sorted = [...ranges].sort((x, y) => x[0] - y[0]);
  const out: [number, number][] = [];
  for (const r of sorted) {
    const last = out.at(-1);
    if (last && r[0] <= last[1] + 1) last[1] = Math.max(last[1], r[1]);
    else out.push([r[0], r[1]]);
  }
  return out;
}
