// The bundled framework catalogues and fast look-ups over them. Pure data, no I/O.
import { CIS_V8 } from './catalogues/cis-v8.ts';
import {
  FRAMEWORK_IDS,
  type Catalogue,
  type CatalogueControl,
  type FrameworkId,
} from './catalogues/catalogue-types.ts';
import { GDPR } from './catalogues/gdpr.ts';
import { ISO_27001 } from './catalogues/iso27001.ts';
import { NIST_CSF } from './catalogues/nist-csf.ts';
import { SOC2 } from './catalogues/soc2.ts';

export {
  FRAMEWORK_IDS,
  type Catalogue,
  type CatalogueControl,
  type CatalogueGroup,
  type FrameworkId,
} from './catalogues/catalogue-types.ts';

export const CATALOGUES: Readonly<Record<FrameworkId, Catalogue>> = {
  soc2: SOC2,
  gdpr: GDPR,
  iso27001: ISO_27001,
  'nist-csf': NIST_CSF,
  'cis-v8': CIS_V8,
};

/** Catalogue order: the order frameworks are listed in. */
export const CATALOGUE_LIST: readonly Catalogue[] = FRAMEWORK_IDS.map((id) => CATALOGUES[id]);

const byId = new Map<FrameworkId, Map<string, CatalogueControl>>(
  CATALOGUE_LIST.map((c) => [c.id, new Map(c.controls.map((k) => [k.id, k]))]),
);
/** Position of each control in its catalogue, for sorting stored rows in catalogue order. */
const order = new Map<FrameworkId, Map<string, number>>(
  CATALOGUE_LIST.map((c) => [c.id, new Map(c.controls.map((k, i) => [k.id, i]))]),
);

export const isFrameworkId = (v: unknown): v is FrameworkId =>
  typeof v === 'string' && (FRAMEWORK_IDS as readonly string[]).includes(v);

export function findControl(framework: FrameworkId, controlId: string): CatalogueControl | undefined {
  return byId.get(framework)?.get(controlId);
}

export function controlIndex(framework: FrameworkId, controlId: string): number {
  return order.get(framework)?.get(controlId) ?? Number.MAX_SAFE_INTEGER;
}
