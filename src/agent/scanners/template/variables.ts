// The template variables' names on their own, without the engine: the server's scan schemas (and
// through them the web app) refuse scan variables of these names.

/** Values every request may use; all derive from the scanned URL (nuclei's names). */
export const TEMPLATE_VARIABLES = [
  'BaseURL',
  'RootURL',
  'Hostname',
  'Host',
  'Port',
  'Scheme',
  'Path',
  'File',
  'Query',
  'Input',
  'FQDN',
  'RDN',
  'DN',
  'TLD',
  'SD',
] as const;
