// Out-of-band checks (nuclei's interactsh): a request rendered with `{{interactsh-url}}` carries a
// callback address unique to it; when its block's operators read `interactsh_protocol`,
// `interactsh_request`, `interactsh_response` or `interactsh_ip`, its answer is judged only once
// callbacks arrive, with the callback's values added to the answer's — one result at most per
// request, as nuclei reports an interaction once. The Rampart server receives the callbacks (at
// its public base URL, and by DNS where configured) and the worker reads them under its lease.
import { randomBytes } from 'node:crypto';
import type { DslValue } from './dsl.ts';
import type { AnswerView } from './operators.ts';

export interface OobInteraction {
  /** The callback id (the token after the scan's prefix). */
  id: string;
  protocol: 'http' | 'dns';
  /** The request as received (HTTP request text, or the DNS question). */
  request: string;
  remoteAddress: string;
}

export interface OobClient {
  /** A new callback: its id, and the text `{{interactsh-url}}` becomes. */
  next(): { id: string; url: string };
  /** Callbacks received since the last call. */
  poll(): Promise<OobInteraction[]>;
  /** How long to wait for callbacks after the last request (nuclei's cooldown, 5 s). */
  waitMs: number;
}

/** How a lease describes the callbacks its scan may use. */
export interface OobLeaseOptions {
  /** 12 lower-case letters and digits, unique to the scan. */
  prefix: string;
  /** `host[:port]/oob/` of the server's public base URL, for HTTP callbacks. */
  httpBase?: string;
  /** The zone whose names the server answers, for DNS (and HTTP to those names). */
  dnsDomain?: string;
}

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const OOB_ID_LENGTH = 13;

/** A random callback id: lower-case letters and digits, safe in a DNS label and a path. */
export function oobId(): string {
  const bytes = randomBytes(OOB_ID_LENGTH);
  let s = '';
  for (const b of bytes) s += ALPHABET[b % 36];
  return s;
}

/** The callback address of a token: a DNS name under the zone when there is one, else a URL path. */
export function oobUrl(o: OobLeaseOptions, token: string): string {
  return o.dnsDomain ? `${token}.${o.dnsDomain}` : `${o.httpBase}${token}`;
}

/** An answer seen together with one callback: the interactsh names come from the callback. */
export class OobView implements AnswerView {
  readonly #inner: AnswerView;
  readonly #values: Map<string, string>;
  constructor(inner: AnswerView, i: OobInteraction) {
    this.#inner = inner;
    this.#values = new Map([
      ['interactsh_protocol', i.protocol],
      ['interactsh_request', i.request],
      // The server's answer to the callback carries nothing a template can rely on.
      ['interactsh_response', ''],
      ['interactsh_ip', i.remoteAddress],
    ]);
  }
  get(name: string): DslValue | undefined {
    return this.#values.get(name) ?? this.#inner.get(name);
  }
  part(part: string): string | undefined {
    return this.#values.get(part) ?? this.#inner.part(part);
  }
  lowerPart(part: string): string | undefined {
    const v = this.#values.get(part);
    return v === undefined ? this.#inner.lowerPart(part) : v.toLowerCase();
  }
  bytes(part: string): Buffer | undefined {
    const v = this.#values.get(part);
    return v === undefined ? this.#inner.bytes(part) : Buffer.from(v, 'utf8');
  }
}
