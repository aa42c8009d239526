// CMMC → Score & SPRS: the 15 requirements MET / NOT MET with what is missing, the exports, and
// (only at 15/15) the Affirming Official's confirmation that they entered the assessment in SPRS.
// Rampart never files in SPRS.
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Checkbox,
  FileButton,
  Group,
  List,
  Paper,
  Stack,
  Table,
  Text,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { MailboxNotice } from '../../components/MailboxNotice.tsx';
import { ErrorAlert, ErrorState, LoadingState } from '../../components/QueryStates.tsx';
import { cageCodeProblem } from '../../../cmmc/cage-code.ts';
import {
  cmmcKeys,
  confirmSprs,
  exportUrls,
  invalidStoredCageCodes,
  programKeys,
  scoreQuery,
  sprsProofUrl,
  uploadSprsProof,
  type ProfileDto,
  type ScoreDto,
} from '../../lib/cmmc-api.ts';
import { notifySuccess } from '../../lib/errors.ts';
import { formatDate, formatDateTime } from '../../lib/format.ts';

const STATUS = {
  MET: { label: 'MET', color: 'green' },
  NA: { label: 'MET (not applicable)', color: 'teal' },
  NOT_MET: { label: 'NOT MET', color: 'red' },
} as const;
const POLICY_NAMES: Record<string, string> = {
  access_control: 'Access Control Policy',
  identification_authentication: 'Identification and Authentication Policy',
  media_protection: 'Media Protection Policy',
  physical_protection: 'Physical Protection Policy',
  system_communications_protection: 'System and Communications Protection Policy',
  system_information_integrity: 'System and Information Integrity Policy',
};
const todayIso = () => new Date().toISOString().slice(0, 10);
/** Reason codes no attestation settles: what to do instead (the Device check tab has the full text). */
const UNSETTLED_REASON: Record<string, string> = {
  admin_groups_unresolved:
    'administrator groups could not be read from another account: re-run it signed in as the daily user, without entering another password',
  no_signed_in_user: 'nobody was signed in when it ran: re-run it while the daily user is signed in',
};

function Reasons({ r }: { r: ScoreDto['requirements'][number] }) {
  const items: string[] = [];
  if (r.missingItems.length) items.push(`Unanswered attestation items: ${r.missingItems.join(', ')}`);
  if (r.noItems.length) items.push(`Answered no: ${r.noItems.join(', ')}`);
  if (r.unjustifiedNa.length) items.push(`Not applicable without a note: ${r.unjustifiedNa.join(', ')}`);
  if (r.needsDeviceRun) items.push('No computer has sent a device check in the last 30 days.');
  for (const f of r.failingChecks)
    items.push(
      f.attestItem
        ? `${f.hostname}: ${f.checkId} is not readable (third-party anti-malware); answer ${f.attestItem} yes to settle it`
        : `${f.hostname}: ${f.checkId} is ${f.result}${f.reason && UNSETTLED_REASON[f.reason] ? ` (${UNSETTLED_REASON[f.reason]}; see the Device check tab)` : ''}`,
    );
  if (r.pendingDevices.length) items.push(`Device check older than 30 days (pending): ${r.pendingDevices.join(', ')}`);
  if (r.coverage && r.coverage.unaccounted > 0)
    items.push(
      `${r.coverage.covered} of ${r.coverage.declared} computers covered: ${r.coverage.unaccounted} in Scope sent no device check and have no attestation.`,
    );
  if (r.missingPolicy)
    items.push(
      r.policyReviewOverdueSince
        ? `${POLICY_NAMES[r.missingPolicy] ?? r.missingPolicy}: review overdue since ${r.policyReviewOverdueSince} (record the review on the Policies tab).`
        : `${POLICY_NAMES[r.missingPolicy] ?? r.missingPolicy} is not approved and in force.`,
    );
  const attested = r.attestedChecks.map(
    (a) => `${a.hostname}: ${a.checkId} (not readable with third-party anti-malware) settled by ${a.itemId}`,
  );
  if (!items.length)
    return (
      <Text size="xs" c="dimmed">
        {r.status === 'NA' ? `Not applicable: ${r.naJustification ?? ''}` : 'All evidence in place.'}
        {attested.length > 0 && ` Attested instead of read: ${attested.join('; ')}.`}
      </Text>
    );
  return (
    <List size="xs" spacing={2}>
      {items.map((t) => (
        <List.Item key={t}>{t}</List.Item>
      ))}
    </List>
  );
}

function SprsForm({ tenantId, profile, score }: { tenantId: string; profile: ProfileDto; score: ScoreDto }) {
  const qc = useQueryClient();
  const codes = [profile.cageCode, ...profile.additionalCageCodes];
  // Codes saved before I and O were refused: the server answers cmmc_cage_code_invalid.
  const invalidCodes = invalidStoredCageCodes(profile);
  const [statusDate, setStatusDate] = useState(todayIso());
  const [affirmedOn, setAffirmedOn] = useState(todayIso());
  const [scope, setScope] = useState(profile.scopeDescription ?? '');
  const [selected, setSelected] = useState<string[]>(codes);
  const [affirm, setAffirm] = useState(false);
  const confirm = useMutation({
    mutationFn: () =>
      confirmSprs(tenantId, {
        statusDate,
        affirmedInSprsOn: affirmedOn,
        scopeDescription: scope,
        cageCodes: selected,
        affirm: true,
        affirmationTextVersion: score.affirmationTextVersion,
      }),
    onSuccess: (r) => {
      notifySuccess(`Recorded. The next self-assessment is due ${formatDate(r.nextDue)}.`, 'SPRS confirmation saved');
      void qc.invalidateQueries({ queryKey: programKeys.score(tenantId) });
      void qc.invalidateQueries({ queryKey: cmmcKeys.profile(tenantId) });
    },
  });
  return (
    <Paper withBorder p="lg" radius="md" data-testid="sprs-form">
      <Stack gap="sm">
        <Title order={2} size="h3">
          Confirm your SPRS entry
        </Title>
        <Text size="sm">
          Rampart does not file for you. You, the Affirming Official ({profile.affirmingOfficial.name},{' '}
          {profile.affirmingOfficial.title}), enter the Level 1 self-assessment in SPRS (PIEE, &ldquo;SPRS Cyber Vendor
          User&rdquo; role), then record here what was entered. The 365-day cycle starts at the CMMC Status Date.
        </Text>
        <Group grow align="flex-start">
          <TextInput
            type="date"
            label="CMMC Status Date (as entered in SPRS)"
            value={statusDate}
            onChange={(e) => setStatusDate(e.currentTarget.value)}
            required
          />
          <TextInput
            type="date"
            label="Date the affirmation was made in SPRS"
            value={affirmedOn}
            onChange={(e) => setAffirmedOn(e.currentTarget.value)}
            required
          />
        </Group>
        <Textarea
          label="Assessment scope (as entered in SPRS)"
          value={scope}
          onChange={(e) => setScope(e.currentTarget.value)}
          autosize
          minRows={2}
          required
          maxLength={4000}
        />
        <Checkbox.Group label="CAGE codes entered" value={selected} onChange={setSelected}>
          <Group mt={4}>
            {codes.map((c) => (
              <Checkbox key={c} value={c} label={c} disabled={c === profile.cageCode} />
            ))}
          </Group>
        </Checkbox.Group>
        {invalidCodes.length > 0 && (
          <Alert
            color="red"
            variant="light"
            title="Correct the CAGE code in Scope first"
            data-testid="sprs-cage-invalid"
          >
            {invalidCodes.map((c) => cageCodeProblem(c)).join(' ')} SPRS does not know such a code, so the confirmation
            cannot be recorded until it is corrected in Scope and saved.
          </Alert>
        )}
        <Checkbox checked={affirm} onChange={(e) => setAffirm(e.currentTarget.checked)} label={score.affirmationText} />
        <ErrorAlert error={confirm.error} title="Could not record the confirmation" />
        <Group>
          <Button
            onClick={() => confirm.mutate()}
            disabled={!affirm || !scope.trim() || !statusDate || !affirmedOn || invalidCodes.length > 0}
            loading={confirm.isPending}
          >
            Record SPRS confirmation
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}

/** The optional screenshot or PDF of the SPRS entry, kept with the latest confirmation. */
function SprsProof({
  tenantId,
  fileName,
  canManage,
}: {
  tenantId: string;
  fileName: string | null;
  canManage: boolean;
}) {
  const qc = useQueryClient();
  const upload = useMutation({
    mutationFn: (f: File) => uploadSprsProof(tenantId, f),
    onSuccess: () => {
      notifySuccess('SPRS proof attached.');
      void qc.invalidateQueries({ queryKey: programKeys.score(tenantId) });
    },
  });
  return (
    <Stack gap={4}>
      <Group gap="xs">
        <Text size="sm">SPRS proof:</Text>
        {fileName ? (
          <Anchor href={sprsProofUrl(tenantId)} size="sm">
            {fileName}
          </Anchor>
        ) : (
          <Text size="sm" c="dimmed">
            none attached (optional)
          </Text>
        )}
        {canManage && (
          <FileButton onChange={(f) => f && upload.mutate(f)} accept=".pdf,.png,.jpg,.jpeg">
            {(props) => (
              <Button {...props} size="compact-xs" variant="default" loading={upload.isPending}>
                {fileName ? 'Replace screenshot or PDF' : 'Attach screenshot or PDF'}
              </Button>
            )}
          </FileButton>
        )}
      </Group>
      <ErrorAlert error={upload.error} title="Could not attach the proof" />
    </Stack>
  );
}

/** Why a confirmed profile shows not compliant: what regressed after the SPRS confirmation. */
function Regression({ regression }: { regression: NonNullable<ScoreDto['regression']> }) {
  return (
    <Alert color="red" variant="light" title="Not compliant since the SPRS confirmation" data-testid="cmmc-regression">
      <Stack gap={4}>
        <Text size="sm">
          On {formatDateTime(regression.at)} the live score dropped below 15 of 15. The Affirming Official was e-mailed
          and the bid portal told. It returns to compliant by itself once every requirement is MET again. What
          regressed:
        </Text>
        <List size="sm">
          {regression.requirements.map((r) => (
            <List.Item key={r.requirementId}>
              {r.requirementId} {r.title}: {r.reasons.join('; ')}
            </List.Item>
          ))}
        </List>
        <MailboxNotice />
      </Stack>
    </Alert>
  );
}

export function ScoreTab({
  tenantId,
  profile,
  canManage,
}: {
  tenantId: string;
  profile: ProfileDto;
  canManage: boolean;
}) {
  const q = useQuery(scoreQuery(tenantId));
  if (q.isPending) return <LoadingState label="Scoring the 15 requirements…" />;
  if (q.isError)
    return <ErrorState error={q.error} title="Could not score the requirements" onRetry={() => void q.refetch()} />;
  const s = q.data;
  const urls = exportUrls(tenantId);
  return (
    <Stack gap="lg">
      {s.regression && <Regression regression={s.regression} />}
      <Paper withBorder p="lg" radius="md">
        <Group justify="space-between" align="center">
          <Stack gap={2}>
            <Text size="xl" fw={700} data-testid="score-total">
              {s.met} of {s.total} MET
            </Text>
            <Text size="sm" c="dimmed">
              No partial credit: a requirement is MET only when every device check, attestation item and policy behind
              it is in place. Not applicable counts as MET.
            </Text>
            {s.lastConfirmation && (
              <>
                <Text size="sm">
                  Last SPRS confirmation {formatDateTime(s.lastConfirmation.confirmedAt)}: status date{' '}
                  {formatDate(s.lastConfirmation.statusDate)}, next due {formatDate(s.lastConfirmation.nextDue)}.
                </Text>
                <SprsProof tenantId={tenantId} fileName={s.lastConfirmation.proofFileName} canManage={canManage} />
              </>
            )}
          </Stack>
          <Group gap="xs">
            <Button component="a" href={urls.csv} variant="default" size="xs">
              Controls CSV
            </Button>
            <Button component="a" href={urls.json} variant="default" size="xs">
              Controls JSON
            </Button>
            <Button component="a" href={urls.zip} variant="default" size="xs">
              Evidence pack (zip)
            </Button>
          </Group>
        </Group>
      </Paper>
      <Table withTableBorder striped verticalSpacing="xs">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Requirement</Table.Th>
            <Table.Th>Result</Table.Th>
            <Table.Th>What is missing</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {s.requirements.map((r) => (
            <Table.Tr key={r.requirementId} data-testid={`score-${r.requirementId}`}>
              <Table.Td>
                <Text size="sm" fw={500}>
                  {r.requirementId} {r.title}
                </Text>
                <Text size="xs" c="dimmed">
                  FAR 52.204-21(b)(1)({r.far}) · v2.0 {r.aliases.join(', ')}
                </Text>
              </Table.Td>
              <Table.Td>
                <Badge color={STATUS[r.status].color} variant="light">
                  {STATUS[r.status].label}
                </Badge>
              </Table.Td>
              <Table.Td>
                <Reasons r={r} />
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {s.allMet ? (
        s.canConfirm ? (
          <SprsForm tenantId={tenantId} profile={profile} score={s} />
        ) : (
          <Alert color="green" variant="light" title="15 of 15 MET" data-testid="sprs-who">
            Only the Affirming Official, {s.affirmingOfficial.name} ({s.affirmingOfficial.email}), confirms the SPRS
            entry, signed in with that e-mail{s.affirmingOfficial.isCaller ? ' and with the owner or admin role' : ''}.
            Change the Affirming Official in Scope if it is someone else now.
          </Alert>
        )
      ) : (
        <Alert color="blue" variant="light" title="SPRS confirmation opens at 15 of 15">
          Fix what the table lists, then the Affirming Official can enter the assessment in SPRS and confirm it here.
        </Alert>
      )}
    </Stack>
  );
}
