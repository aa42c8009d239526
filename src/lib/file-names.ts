const MAX_NAME = 200;

/**
 * An uploaded file's name fit to store, show and cite: the last path segment only, without control
 * characters or angle brackets (it lands in HTML, headers and prompts), whitespace collapsed, no
 * leading dots (no hidden files), at most 200 characters with a short extension kept. Empty when
 * nothing is left, so each caller picks its own fallback.
 */
export function cleanFileName(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  let clean = base
    .normalize('NFC')
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f<>]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^\.+/, '');
  if (clean.length > MAX_NAME) {
    const dot = clean.lastIndexOf('.');
    const ext = dot > 0 && clean.length - dot <= 10 ? clean.slice(dot) : '';
    clean = clean.slice(0, MAX_NAME - ext.length) + ext;
  }
  return clean;
}
