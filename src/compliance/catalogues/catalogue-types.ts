// Shape of a bundled framework catalogue. Where the framework text is licensed (ISO, AICPA, CIS)
// a catalogue carries identifiers and short titles only, never the control text.

export const FRAMEWORK_IDS = ['soc2', 'gdpr', 'iso27001', 'nist-csf', 'cis-v8'] as const;
export type FrameworkId = (typeof FRAMEWORK_IDS)[number];

export interface CatalogueGroup {
  id: string;
  title: string;
  /** The enclosing group (NIST function of a category, SOC 2 category of a criteria series), or null at the top. */
  parentId: string | null;
  /** What the level is called in this framework: function, category, chapter, theme, control... */
  kind: string;
  description?: string;
}

export interface CatalogueControl {
  id: string;
  /** Short title (ISO, SOC 2, CIS: identifiers and short titles only). */
  title: string;
  /** The innermost group holding the control. */
  groupId: string;
  /** Only where the licence allows the text (NIST CSF: public domain; GDPR: EU law). */
  description?: string;
  /** CIS Controls: the lowest implementation group the safeguard belongs to (IGs are cumulative). */
  implementationGroup?: 1 | 2 | 3;
}

export interface Catalogue {
  id: FrameworkId;
  name: string;
  shortName: string;
  /** The official edition the catalogue follows. */
  edition: string;
  /** Version of this catalogue's data; raised on every correction so stored views can say what they used. */
  catalogueVersion: string;
  publisher: string;
  licence: { name: string; textIncluded: boolean; note: string };
  /** What one assessable entry is called (criterion, article, control, subcategory, safeguard). */
  controlNoun: string;
  groups: readonly CatalogueGroup[];
  controls: readonly CatalogueControl[];
}
