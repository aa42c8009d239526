// A small, tolerant HTML tokenizer: start and end tags with their attributes, comments and the
// bodies of raw-text elements (script, style). No DOM: the crawler needs links, forms and a few
// tags the passive rules look at, and must not choke on the broken markup real sites serve.

export interface HtmlTag {
  /** Lower-cased tag name; end tags are named with a leading slash ("/form"). */
  name: string;
  /** Lower-cased attribute names; values entity-decoded; the first of repeated attributes wins. */
  attrs: Map<string, string>;
  /** Offset of the `<` in the document. */
  offset: number;
}

export interface HtmlDocument {
  tags: HtmlTag[];
  comments: string[];
  /** Bodies of inline <script> elements. */
  scripts: string[];
}

const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  sol: '/',
  colon: ':',
  equals: '=',
  quest: '?',
  num: '#',
  period: '.',
};

/** Decodes character references (numeric, and the named ones that matter in URLs and markup). */
export function decodeEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[a-zA-Z]{2,8});?/g, (m, body: string) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : m;
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? m;
  });
}

const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'noscript']);
const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f';

export function tokenizeHtml(html: string): HtmlDocument {
  const tags: HtmlTag[] = [];
  const comments: string[] = [];
  const scripts: string[] = [];
  const n = html.length;
  let i = 0;
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt < 0) break;
    i = lt + 1;
    if (html.startsWith('!--', i)) {
      const end = html.indexOf('-->', i + 3);
      comments.push(html.slice(i + 3, end < 0 ? n : end));
      i = end < 0 ? n : end + 3;
      continue;
    }
    if (html[i] === '!' || html[i] === '?') {
      const end = html.indexOf('>', i);
      i = end < 0 ? n : end + 1;
      continue;
    }
    const closing = html[i] === '/';
    if (closing) i += 1;
    if (!/[a-zA-Z]/.test(html[i] ?? '')) continue;
    let j = i;
    while (j < n && !isSpace(html[j]) && html[j] !== '/' && html[j] !== '>') j += 1;
    const name = html.slice(i, j).toLowerCase();
    const attrs = new Map<string, string>();
    i = j;
    // Attributes: name, optional `= value` (double-, single- or unquoted), until `>`.
    while (i < n && html[i] !== '>') {
      if (isSpace(html[i]) || html[i] === '/') {
        i += 1;
        continue;
      }
      let k = i + 1;
      while (k < n && !isSpace(html[k]) && html[k] !== '=' && html[k] !== '>' && html[k] !== '/') k += 1;
      const attr = html.slice(i, k).toLowerCase();
      i = k;
      while (isSpace(html[i])) i += 1;
      let value = '';
      if (html[i] === '=') {
        i += 1;
        while (isSpace(html[i])) i += 1;
        const q = html[i];
        if (q === '"' || q === "'") {
          const end = html.indexOf(q, i + 1);
          value = html.slice(i + 1, end < 0 ? n : end);
          i = end < 0 ? n : end + 1;
        } else {
          let e = i;
          while (e < n && !isSpace(html[e]) && html[e] !== '>') e += 1;
          value = html.slice(i, e);
          i = e;
        }
      }
      if (!closing && !attrs.has(attr)) attrs.set(attr, decodeEntities(value));
    }
    i += 1;
    tags.push({ name: closing ? `/${name}` : name, attrs, offset: lt });
    if (!closing && RAW_TEXT.has(name)) {
      const re = new RegExp(`</${name}[\\s/>]`, 'ig');
      re.lastIndex = i;
      const m = re.exec(html);
      const body = html.slice(i, m ? m.index : n);
      if (name === 'script') scripts.push(body);
      i = m ? m.index : n;
    }
  }
  return { tags, comments, scripts };
}

export interface FormField {
  name: string;
  type: string;
  value: string;
}

export interface HtmlForm {
  method: string;
  /** The absolute action URL (the page itself when the form has no action). */
  action: string;
  fields: FormField[];
}

export interface PageStructure {
  /** Absolute URLs of every link-like reference (a, area, link, script, img, iframe, frame, form). */
  links: string[];
  forms: HtmlForm[];
  /** Every tag, for the passive rules. */
  doc: HtmlDocument;
  /** The URL relative references resolve against (<base href> when present). */
  base: string;
}

const LINK_ATTRS: Record<string, string[]> = {
  a: ['href'],
  area: ['href'],
  link: ['href'],
  script: ['src'],
  img: ['src'],
  iframe: ['src'],
  frame: ['src'],
  form: ['action'],
  source: ['src'],
  embed: ['src'],
};

/** Resolves a reference against a base; undefined for schemes a crawler must not follow. */
export function resolveRef(ref: string, base: string): URL | undefined {
  const r = ref.trim();
  if (!r || r.startsWith('#')) return undefined;
  if (/^(?:mailto|javascript|data|tel|about|blob|vbscript):/i.test(r)) return undefined;
  try {
    const u = new URL(r, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u : undefined;
  } catch {
    return undefined;
  }
}

/** Links, forms and the base URL of one HTML page fetched from `pageUrl`. */
export function parsePage(html: string, pageUrl: string): PageStructure {
  const doc = tokenizeHtml(html);
  const baseTag = doc.tags.find((t) => t.name === 'base' && t.attrs.get('href'));
  const base = (baseTag && resolveRef(baseTag.attrs.get('href')!, pageUrl)?.href) ?? pageUrl;
  const links: string[] = [];
  const forms: HtmlForm[] = [];
  let open: HtmlForm | undefined;
  for (const t of doc.tags) {
    for (const attr of LINK_ATTRS[t.name] ?? []) {
      const v = t.attrs.get(attr);
      const u = v === undefined ? undefined : resolveRef(v, base);
      if (u) links.push(u.href);
    }
    if (t.name === 'form') {
      const action = t.attrs.get('action');
      open = {
        method: (t.attrs.get('method') || 'GET').toUpperCase(),
        action: (action && resolveRef(action, base)?.href) || pageUrl,
        fields: [],
      };
      forms.push(open);
    } else if (t.name === '/form') {
      open = undefined;
    } else if (open && (t.name === 'input' || t.name === 'select' || t.name === 'textarea' || t.name === 'button')) {
      const name = t.attrs.get('name');
      if (name)
        open.fields.push({
          name,
          type: (t.attrs.get('type') || (t.name === 'input' ? 'text' : t.name)).toLowerCase(),
          value: t.attrs.get('value') ?? '',
        });
    }
  }
  return { links, forms, doc, base };
}
