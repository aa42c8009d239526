// Limits of the user-visible names Better Auth stores (user and tenant names, tenant slugs, picture
// URLs), which it accepts at any length by itself. Shared with the web app's forms.
import { z } from 'zod';

export const USER_NAME_MAX = 200;
export const TENANT_NAME_MAX = 100;
export const TENANT_SLUG_MAX = 100;
/** A user's picture or a tenant's logo: a URL, not a file. */
export const PICTURE_URL_MAX = 2048;

const name = (max: number) => z.string().trim().min(1, 'Required.').max(max, `At most ${max} characters.`);
const picture = z.string().max(PICTURE_URL_MAX, `At most ${PICTURE_URL_MAX} characters.`).nullish();

/** The checked fields of the Better Auth bodies that carry names; other fields pass to Better Auth unchanged. */
export const AUTH_NAME_RULES: Readonly<Record<string, z.ZodType>> = {
  '/api/auth/sign-up/email': z.looseObject({ name: name(USER_NAME_MAX), image: picture }),
  '/api/auth/update-user': z.looseObject({ name: name(USER_NAME_MAX).optional(), image: picture }),
  '/api/auth/organization/create': z.looseObject({
    name: name(TENANT_NAME_MAX),
    slug: name(TENANT_SLUG_MAX),
    logo: picture,
  }),
  '/api/auth/organization/update': z.looseObject({
    data: z.looseObject({
      name: name(TENANT_NAME_MAX).optional(),
      slug: name(TENANT_SLUG_MAX).optional(),
      logo: picture,
    }),
  }),
};
