// The tenant home page's one read: open findings and their trend, unfinished scans with why they
// wait, assets awaiting proof of ownership, and the CMMC status with its next due date.
import { z } from 'zod';
import { scanSchema, SEVERITIES } from '../scans/scans-schemas.ts';

export const overviewParamsSchema = z.object({ tenantId: z.uuid({ message: 'tenantId must be a UUID' }) });

/** Days of the findings trend (today included). */
export const TREND_DAYS = 30;
/** How many unfinished scans and pending assets the page lists (the counts cover all of them). */
export const OVERVIEW_LIST_LIMIT = 5;

const severityCounts = z.object(
  Object.fromEntries(SEVERITIES.map((s) => [s, z.int()])) as Record<(typeof SEVERITIES)[number], z.ZodInt>,
);

export const overviewSchema = z.object({
  findings: z.object({
    /** Open findings of assets not archived, by severity. */
    open: severityCounts,
    openTotal: z.int(),
    /** Open findings past their SLA due date. */
    overdue: z.int(),
    /**
     * One entry per UTC day, oldest first: findings first seen that day, and fixes that day (a scan
     * no longer finding it, or a person marking it fixed).
     */
    trend: z.array(z.object({ day: z.string(), opened: z.int(), fixed: z.int() })),
  }),
  scans: z.object({
    running: z.int(),
    queued: z.int(),
    /** The newest unfinished scans, each queued one with its wait reason (the scans list's). */
    active: z.array(scanSchema),
  }),
  assets: z.object({
    total: z.int(),
    /** Assets not archived whose ownership is not proven yet (no scan runs against them). */
    awaitingProof: z.int(),
    pending: z.array(z.object({ id: z.string(), name: z.string(), target: z.string(), kind: z.string() })),
  }),
  /** Null when the tenant has no CMMC profile yet. */
  cmmc: z
    .object({
      status: z.enum(['in_progress', 'compliant', 'renewal_due', 'not_compliant', 'expired']),
      statusDate: z.string().nullable(),
      /** The day the affirmation must be renewed by (365 days after the status date); null before one is made. */
      nextDue: z.string().nullable(),
      daysUntilDue: z.int().nullable(),
    })
    .nullable(),
});
export type Overview = z.infer<typeof overviewSchema>;
