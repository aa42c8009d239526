// XPath matchers and extractors as nuclei runs them. A part that starts with `<?xml` is read as XML,
// anything else as HTML, leniently (unclosed tags, attributes without quotes), as browsers and
// nuclei's HTML parser do. Names are matched without regard to namespaces or case, so an Atom feed's
// `//entry/title` finds its entries although they sit in a default namespace (nuclei's XML reader
// ignores namespaces the same way). A selected attribute stands for its value, an element for its
// text; expressions that do not select nodes (`count(//a)`) select nothing, as in nuclei.
import { DOMParser } from 'linkedom';
import xpath from 'xpath';

/** A compiled expression. The package's typings omit `parse`, which its documentation describes. */
export interface XPathQuery {
  select(options: { node: unknown; isHtml?: boolean }): unknown;
}
const { parse } = xpath as unknown as { parse(expression: string): XPathQuery };

/** Compiles one expression; throws with a message naming what is wrong. */
export function compileXPath(expression: string): XPathQuery {
  try {
    return parse(expression);
  } catch (e) {
    throw new Error(`not a valid XPath 1.0 expression: ${(e as Error).message}`);
  }
}

// One answer's part is usually read by several matchers and extractors in a row: keep the last
// parsed document.
let lastText: string | undefined;
let lastDocument: Document | undefined;

// The DOM parser's document-type node has no next sibling, which hides the whole document from the
// XPath engine's tree walk; a document type holds nothing an expression can select, so it goes.
const DOCTYPE = /^(\s*(?:<\?xml[^>]*\?>)?\s*(?:<!--[\s\S]*?-->\s*)*)<!doctype[^[>]*(?:\[[\s\S]*?\])?\s*>/i;

function documentOf(text: string): Document {
  if (text === lastText && lastDocument) return lastDocument;
  const parser = new DOMParser();
  const source = text.replace(DOCTYPE, '$1');
  const doc = (text.startsWith('<?xml')
    ? parser.parseFromString(source, 'text/xml')
    : parser.parseFromString(source, 'text/html')) as unknown as Document;
  lastText = text;
  lastDocument = doc;
  return doc;
}

/** The nodes an expression selects in a text; none when it selects no nodes or fails at run time. */
export function selectNodes(query: XPathQuery, text: string): Node[] {
  try {
    const result = query.select({ node: documentOf(text), isHtml: true });
    return Array.isArray(result) ? (result as Node[]) : [];
  } catch {
    return []; // nuclei skips an expression that fails on an answer
  }
}

/** What an extractor takes from a selected node: the named attribute, else the node's text. */
export function nodeValue(node: Node, attribute?: string): string {
  if (attribute) return node.nodeType === 1 ? ((node as Element).getAttribute(attribute) ?? '') : '';
  if (node.nodeType === 2) return (node as Attr).value;
  return node.textContent ?? '';
}
