// One template's run against one target, in nuclei's order: variables evaluated once (those
// needing values only a response gives, when they can be), then each block's requests — every
// path or raw request for every payload combination — rendered with the URL variables, variables,
// constants, payloads and values extracted earlier in the block. A request with a placeholder
// that has no value is not sent, and nor are the block's later ones (nuclei's rule). Every answer
// of a redirect chain is matched, the last first; results, stop-at-first-match, req-condition
// (`status_code_2`) and block ids (`login_body`) as nuclei has them.
import type { HttpExchange } from '../http/scoped-http.ts';
import { CookieJar } from './cookies.ts';
import type { DslValue } from './dsl.ts';
import type { RequestBlock, Template } from './model.ts';
import type { NetworkBlock } from './network.ts';
import type { SslBlock } from './ssl.ts';
import { runFlow } from './flow.ts';
import { resultsOf, runOperators, type ResultEntry } from './operators.ts';
import { payloadCombinations } from './payloads.ts';
import { buildRequest, type BuiltRequest } from './raw.ts';
import { render, renderString, type CompiledText } from './render.ts';
import { OobView, type OobInteraction } from './oob.ts';
import { responseData, type ResponseData } from './response.ts';

export type Lookup = (name: string) => DslValue | undefined;

export interface BlockResult extends ResultEntry {
  block: RequestBlock;
  hop: HttpExchange | NonNullable<HttpExchange['hops']>[number];
  request: BuiltRequest;
}

export interface TemplateRunner {
  /** True for a URL the scan may contact. */
  inScope(url: URL): boolean;
  /** Sends a built request (the engine shares identical GETs); throws HttpTransportError and the like. */
  send(req: BuiltRequest, block: RequestBlock, jar: CookieJar | null): Promise<HttpExchange>;
  /** A request that could not be built or sent; the template goes on. */
  failed(message: string): void;
  /** A request refused before sending (outside the scan's scope); not a failure of the target. */
  skipped(message: string): void;
  result(r: BlockResult): void;
  /** Runs a network block against the scanned host; true when it produced a result. */
  network(block: NetworkBlock, scope: Lookup): Promise<boolean>;
  /** Runs an ssl block against the scanned host; true when it produced a result. */
  ssl(block: SslBlock, scope: Lookup): Promise<boolean>;
  /** A new out-of-band callback for `{{interactsh-url}}`; undefined when the scan has none. */
  oobCallback?(): { id: string; url: string } | undefined;
  /** Judges an answer when callbacks for `id` arrive: `judge` reports and says whether it matched. */
  defer?(id: string, judge: (i: OobInteraction) => boolean): void;
}

const randomId = () => {
  // nuclei's randstr is a KSUID: 27 characters of base62.
  const set = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let s = '';
  for (let i = 0; i < 27; i++) s += set[Math.floor(Math.random() * 62)];
  return s;
};

/** Values of one answer by suffixed name: `status_code_2`, or `login_body` for a block with an id. */
function answerLookup(view: ResponseData, extracted: ReadonlyMap<string, DslValue>): Lookup {
  return (name) => extracted.get(name) ?? view.get(name);
}

export async function executeTemplate(
  t: Template,
  baseUrl: URL,
  urlVars: Record<string, string>,
  scanVars: Readonly<Record<string, string>>,
  run: TemplateRunner,
  signal: AbortSignal,
): Promise<void> {
  const jar = new CookieJar();
  const base = new Map<string, DslValue>(Object.entries(urlVars));
  for (const [k, v] of Object.entries(t.constants)) base.set(k, v);
  // The scan's values (nuclei's -var): template variables may read them, and they win over those.
  for (const [k, v] of Object.entries(scanVars)) base.set(k, v);
  const randstr = new Map<string, string>();
  const baseLookup: Lookup = (name) => {
    const v = base.get(name);
    if (v !== undefined) return v;
    if (/^randstr(?:_\w+)?$/.test(name)) {
      if (!randstr.has(name)) randstr.set(name, randomId());
      return randstr.get(name);
    }
    return undefined;
  };
  // Variables are evaluated once per run, in order; one that reads a value only a response gives
  // stays lazy and is rendered with each request's values.
  const lazy = new Map<string, CompiledText>();
  for (const [name, value] of t.variables) {
    if (Object.hasOwn(scanVars, name)) continue;
    if (Array.isArray(value)) {
      base.set(name, value);
      continue;
    }
    const v = render(value, baseLookup);
    if (v === undefined) lazy.set(name, value);
    else base.set(name, v);
  }
  /** `<id>_<name>` values of earlier blocks with an id. */
  const previous = new Map<string, Lookup>();
  /** Internal values of earlier blocks (nuclei's template context): one value as itself, more as a list. */
  const carried = new Map<string, DslValue>();
  let templateResults = false;

  /** Runs one HTTP block; true when it matched (or, having no matchers, extracted), as nuclei's flow counts. */
  const runHttpBlock = async (block: RequestBlock): Promise<boolean> => {
    if (signal.aborted) throw signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
    const dynamic = new Map<string, string[]>();
    const answers = new Map<number, Lookup>();
    const stopBlock = block.stopAtFirstMatch || t.stopAtFirstMatch;
    let status = false;
    combos: for (const payload of payloadCombinations(block.payloads, block.attack)) {
      for (let index = 0; index < block.texts.length; index++) {
        // One callback address per request, however often the request names it.
        let callback: { id: string; url: string } | undefined;
        const scope: Lookup = (name) => {
          if (name === 'interactsh-url') return (callback ??= run.oobCallback?.())?.url;
          const d = dynamic.get(name);
          if (d?.length) return d[0];
          const c = carried.get(name);
          if (c !== undefined) return c;
          const p = payload.get(name);
          if (p !== undefined) return renderString(p, baseLookup) ?? p;
          const b = baseLookup(name);
          if (b !== undefined) return b;
          const l = lazy.get(name);
          if (l) return render(l, scope);
          const indexed = /^(.+)_(\d+)$/.exec(name);
          if (indexed) {
            const a = answers.get(Number(indexed[2]));
            if (a) return a(indexed[1]!);
          }
          for (const [id, get] of previous) if (name.startsWith(`${id}_`)) return get(name.slice(id.length + 1));
          return undefined;
        };
        const built = buildRequest(block, index, scope, baseUrl, t.selfContained);
        if ('missing' in built) break combos; // nuclei skips the rest of the block
        if ('error' in built) {
          run.failed(`${t.id}: ${built.error}`);
          continue;
        }
        if (!run.inScope(built.url)) {
          run.skipped(`${t.id}: ${built.url.origin} is outside the scan's scope`);
          continue;
        }
        let ex: HttpExchange;
        try {
          ex = await run.send(built, block, block.cookies ? jar : null);
        } catch (e) {
          if (signal.aborted) throw signal.reason ?? e;
          if (e instanceof Error && (e.name === 'HttpTransportError' || e.name === 'OutOfScopeError')) {
            run.failed(`${t.id}: ${e.message}`);
            continue;
          }
          throw e;
        }
        if (callback && block.oob && run.defer) {
          // Judged when the target calls back (nuclei's interactsh matching), on the final answer.
          const view = responseData(ex);
          run.defer(callback.id, (i) => {
            const results = resultsOf(block, runOperators(block, new OobView(view, i), scope));
            for (const res of results) run.result({ ...res, block, hop: ex, request: built });
            return results.length > 0;
          });
          continue;
        }
        let matched = false;
        for (const hop of [ex, ...[...(ex.hops ?? [])].reverse()]) {
          const view = responseData(hop);
          // This answer's own `_n` values are readable by its matchers too (nuclei adds them first).
          const extracted = new Map<string, DslValue>();
          if (block.reqCondition) answers.set(index + 1, answerLookup(view, extracted));
          const r = runOperators(block, view, scope);
          for (const [k, v] of [...r.extracts, ...r.dynamic]) extracted.set(k, v.length === 1 ? v[0]! : v);
          if (block.id) previous.set(block.id, answerLookup(view, extracted));
          for (const [k, v] of r.dynamic) dynamic.set(k, block.iterateAll ? [...(dynamic.get(k) ?? []), ...v] : v);
          if (r.matched) matched = true;
          const extractedAny = r.output.length > 0 || r.dynamic.size > 0 || r.extracts.size > 0;
          if (r.matched || (!block.matchers.length && extractedAny)) status = true;
          const results = resultsOf(block, r);
          for (const res of results) run.result({ ...res, block, hop, request: built });
          if (results.length || r.matched || r.output.length || r.dynamic.size) templateResults = true;
          if (stopBlock && results.length) break;
        }
        if (stopBlock && matched) break combos;
      }
    }
    for (const [k, v] of dynamic) carried.set(k, v.length === 1 ? v[0]! : v);
    return status;
  };
  const runNetworkBlock = (block: NetworkBlock) => {
    if (signal.aborted) throw signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
    return run.network(block, baseLookup);
  };
  const runSslBlock = (block: SslBlock) => {
    if (signal.aborted) throw signal.reason ?? new DOMException('The scan was cancelled', 'AbortError');
    return run.ssl(block, baseLookup);
  };

  if (t.flow) {
    const lists = { http: t.requests, network: t.network, ssl: t.ssl };
    const runOne = { http: runHttpBlock, network: runNetworkBlock, ssl: runSslBlock } as const;
    await runFlow(t.flow, async (protocol, which) => {
      const list: (RequestBlock | NetworkBlock | SslBlock)[] = lists[protocol];
      const chosen =
        which === undefined
          ? list
          : typeof which === 'number'
            ? list.slice(which - 1, which)
            : list.filter((b) => 'id' in b && b.id === which);
      let any = false;
      for (const b of chosen) if (await (runOne[protocol] as (b: unknown) => Promise<boolean>)(b)) any = true;
      return any;
    });
    return;
  }
  for (const block of t.requests) {
    await runHttpBlock(block);
    if (t.stopAtFirstMatch && templateResults) return;
  }
  for (const block of t.network) if ((await runNetworkBlock(block)) && t.stopAtFirstMatch) return;
  for (const block of t.ssl) if ((await runSslBlock(block)) && t.stopAtFirstMatch) return;
}
