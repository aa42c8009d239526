// CMMC → Scope: the company profile (CAGE codes, company details, the people who bid or handle
// FCI, the mail platform and the Affirming Official). Owners and admins edit; members read.
import {
  Alert,
  Button,
  Fieldset,
  Group,
  Paper,
  Radio,
  SimpleGrid,
  Stack,
  Text,
  TextInput,
  Textarea,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { ApiError } from '../../lib/api.ts';
import { CAGE_CODE_MESSAGE, cageCodeProblem } from '../../../cmmc/cage-code.ts';
import {
  clearHandoffPrefill,
  cmmcKeys,
  invalidStoredCageCodes,
  readHandoffPrefill,
  saveProfile,
  type HandoffPrefill,
  type ProfileBody,
  type ProfileResponse,
} from '../../lib/cmmc-api.ts';
import { notifyError, notifySuccess } from '../../lib/errors.ts';

interface BiddingUserRow {
  name: string;
  email: string;
  role: string;
}

interface Values {
  cageCode: string;
  additionalCageCodes: string;
  companyName: string;
  companyAddress: string;
  companyPhone: string;
  companyWebsite: string;
  uei: string;
  scopeDescription: string;
  /** Computers that handle FCI (the denominator of device coverage); '' when not declared. */
  deviceCount: string;
  mailPlatform: 'm365' | 'google' | '';
  officialName: string;
  officialTitle: string;
  officialEmail: string;
  biddingUsers: BiddingUserRow[];
}

/** The saved profile, or for a new one the prefill of a claimed bid-portal handoff link. */
function initial(data: ProfileResponse, tenantId: string): Values {
  const p = data.profile;
  const pre = p ? null : readHandoffPrefill(tenantId);
  return {
    cageCode: p?.cageCode ?? pre?.cageCode ?? '',
    additionalCageCodes: p?.additionalCageCodes.join(', ') ?? '',
    companyName: p?.companyName ?? pre?.companyName ?? '',
    companyAddress: p?.companyAddress ?? '',
    companyPhone: p?.companyPhone ?? '',
    companyWebsite: p?.companyWebsite ?? '',
    uei: p?.uei ?? '',
    scopeDescription: p?.scopeDescription ?? '',
    deviceCount: p?.deviceCount ? String(p.deviceCount) : '',
    mailPlatform: p?.mailPlatform ?? '',
    officialName: p?.affirmingOfficial.name ?? '',
    officialTitle: p?.affirmingOfficial.title ?? '',
    officialEmail: p?.affirmingOfficial.email ?? '',
    biddingUsers: p?.biddingUsers.map((u) => ({ name: u.name, email: u.email, role: u.role ?? '' })) ?? [
      { name: '', email: pre?.contactEmail ?? '', role: '' },
    ],
  };
}

const splitCodes = (s: string) =>
  s
    .split(/[\s,;]+/)
    .map((c) => c.trim().toUpperCase())
    .filter(Boolean);

function validate(v: Values): Record<string, string> {
  const e: Record<string, string> = {};
  // A code saved before I and O were refused is named, with its likely correction.
  const primary = cageCodeProblem(v.cageCode);
  if (primary) e['body.cageCode'] = v.cageCode.trim() ? primary : CAGE_CODE_MESSAGE;
  const bad = splitCodes(v.additionalCageCodes).filter((c) => cageCodeProblem(c) !== null);
  if (bad.length)
    e['body.additionalCageCodes'] = bad
      .map((c) =>
        cageCodeProblem(c) === CAGE_CODE_MESSAGE
          ? `${c} is not a CAGE code (5 letters or digits, never I or O).`
          : cageCodeProblem(c),
      )
      .join(' ');
  if (!v.companyName.trim()) e['body.companyName'] = 'Required.';
  if (!v.mailPlatform) e['body.mailPlatform'] = 'Choose the mail platform.';
  if (!/^\d{1,5}$/.test(v.deviceCount.trim()) || Number(v.deviceCount) < 1 || Number(v.deviceCount) > 10000)
    e['body.deviceCount'] = 'How many computers handle FCI: a whole number from 1 to 10000.';
  if (!v.officialName.trim()) e['body.affirmingOfficial.name'] = 'Required.';
  if (!v.officialTitle.trim()) e['body.affirmingOfficial.title'] = 'Required.';
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v.officialEmail.trim()))
    e['body.affirmingOfficial.email'] = 'A valid e-mail address.';
  v.biddingUsers.forEach((u, i) => {
    if (!u.name.trim()) e[`body.biddingUsers.${i}.name`] = 'Required.';
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(u.email.trim()))
      e[`body.biddingUsers.${i}.email`] = 'A valid e-mail address.';
  });
  if (!v.biddingUsers.length) e['body.biddingUsers'] = 'Name at least one person who bids or handles FCI.';
  return e;
}

function toBody(v: Values): ProfileBody {
  return {
    cageCode: v.cageCode.trim().toUpperCase(),
    additionalCageCodes: splitCodes(v.additionalCageCodes),
    companyName: v.companyName.trim(),
    companyAddress: v.companyAddress.trim() || null,
    companyPhone: v.companyPhone.trim() || null,
    companyWebsite: v.companyWebsite.trim() || null,
    uei: v.uei.trim().toUpperCase() || null,
    scopeDescription: v.scopeDescription.trim() || null,
    deviceCount: Number(v.deviceCount.trim()),
    mailPlatform: v.mailPlatform as 'm365' | 'google',
    affirmingOfficial: { name: v.officialName.trim(), title: v.officialTitle.trim(), email: v.officialEmail.trim() },
    biddingUsers: v.biddingUsers.map((u) => ({
      name: u.name.trim(),
      email: u.email.trim(),
      role: u.role.trim() || null,
    })),
  };
}

function PendingActions({ onApply }: { onApply: () => void }) {
  return (
    <Group mt="xs">
      <Button size="xs" variant="light" onClick={onApply}>
        Fill in the bid portal&apos;s details
      </Button>
    </Group>
  );
}

export function ScopeTab({
  tenantId,
  data,
  onSaved,
}: {
  tenantId: string;
  data: ProfileResponse;
  onSaved: () => void;
}) {
  const queryClient = useQueryClient();
  const [values, setValues] = useState<Values>(() => initial(data, tenantId));
  // CAGE codes saved before I and O were refused: named at once, on the fields and above them.
  const storedInvalid = data.profile ? invalidStoredCageCodes(data.profile) : [];
  const [errors, setErrors] = useState<Record<string, string>>(() =>
    storedInvalid.length
      ? Object.fromEntries(
          Object.entries(validate(initial(data, tenantId))).filter(
            ([k]) => k === 'body.cageCode' || k === 'body.additionalCageCodes',
          ),
        )
      : {},
  );
  // A claimed bid-portal link's details, when this tenant has a profile (they are never filled in
  // by themselves: that would overwrite the saved Scope). profileExisted: the link was claimed
  // while the profile existed, so nothing was filled in and the page says so; otherwise the link
  // was claimed before the profile was saved (e.g. by another admin meanwhile), and the details are
  // only offered. Either way "Fill in" copies them into the form, which is saved as usual.
  const [pending, setPending] = useState<HandoffPrefill | null>(() =>
    data.profile ? readHandoffPrefill(tenantId) : null,
  );
  const dismissPending = () => {
    clearHandoffPrefill();
    setPending(null);
  };
  const applyPending = () => {
    if (!pending) return;
    setValues((prev) => ({
      ...prev,
      cageCode: pending.cageCode ?? prev.cageCode,
      companyName: pending.companyName ?? prev.companyName,
      biddingUsers:
        pending.contactEmail &&
        !prev.biddingUsers.some((u) => u.email.trim().toLowerCase() === pending.contactEmail!.toLowerCase())
          ? [...prev.biddingUsers, { name: '', email: pending.contactEmail, role: '' }]
          : prev.biddingUsers,
    }));
    dismissPending();
  };
  const readOnly = !data.canManage;
  const set = <K extends keyof Values>(k: K, v: Values[K]) => setValues((prev) => ({ ...prev, [k]: v }));
  const setUser = (i: number, k: keyof BiddingUserRow, v: string) =>
    setValues((prev) => ({ ...prev, biddingUsers: prev.biddingUsers.map((u, j) => (j === i ? { ...u, [k]: v } : u)) }));

  const save = useMutation({
    mutationFn: (body: ProfileBody) => saveProfile(tenantId, body),
    onSuccess: (res) => {
      queryClient.setQueryData(cmmcKeys.profile(tenantId), res);
      setErrors({});
      clearHandoffPrefill();
      setPending(null);
      notifySuccess(data.profile ? 'Scope saved.' : 'Scope saved. Next: run the device checks.');
      if (!data.profile) onSaved();
    },
    onError: (error) => {
      if (error instanceof ApiError && error.code === 'validation_failed') setErrors(error.fieldIssues());
      notifyError(error, 'Scope not saved');
    },
  });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found = validate(values);
    setErrors(found);
    if (Object.keys(found).length) return;
    save.mutate(toBody(values));
  };

  const err = (path: string) => errors[path] ?? Object.entries(errors).find(([k]) => k.startsWith(`${path}.`))?.[1];

  return (
    <Paper withBorder p="lg" radius="md" maw={860}>
      <form onSubmit={submit} noValidate aria-label="CMMC scope">
        <Stack gap="lg">
          {storedInvalid.length > 0 && (
            <Alert
              color="red"
              variant="light"
              title={storedInvalid.length > 1 ? 'Saved CAGE codes are not valid' : 'The saved CAGE code is not valid'}
              data-testid="cage-invalid"
            >
              {storedInvalid.map((c) => cageCodeProblem(c)).join(' ')} It was saved before such codes were refused.{' '}
              {readOnly ? 'An owner or admin corrects it here and saves' : 'Correct it below and save'}: until then
              Scope cannot be saved and the SPRS entry cannot be confirmed.
            </Alert>
          )}
          {pending &&
            (pending.profileExisted ? (
              <Alert
                color="yellow"
                variant="light"
                title="The bid portal's details were not filled in"
                withCloseButton
                closeButtonLabel="Dismiss"
                onClose={dismissPending}
                data-testid="handoff-unapplied"
              >
                The link from the bid portal was used, but {data.profile?.companyName ?? 'this company'} already has a
                CMMC profile, so nothing in it was changed. The bid portal sent: CAGE code{' '}
                <strong>{pending.cageCode ?? '-'}</strong>, company <strong>{pending.companyName ?? '-'}</strong>,
                contact {pending.contactEmail ?? '-'}. Update the fields below if they differ.
                {!readOnly && <PendingActions onApply={applyPending} />}
              </Alert>
            ) : (
              <Alert
                color="blue"
                variant="light"
                title="Details from the bid portal are available"
                withCloseButton
                closeButtonLabel="Dismiss"
                onClose={dismissPending}
                data-testid="handoff-available"
              >
                The link from the bid portal was used before this CMMC profile was saved. It sent: CAGE code{' '}
                <strong>{pending.cageCode ?? '-'}</strong>, company <strong>{pending.companyName ?? '-'}</strong>,
                contact {pending.contactEmail ?? '-'}. Nothing was changed; fill them in if they are right, then save.
                {!readOnly && <PendingActions onApply={applyPending} />}
              </Alert>
            ))}
          {readOnly && (
            <Alert color="gray" variant="light" role="note">
              Only owners and admins of this tenant can change the scope.
            </Alert>
          )}
          <Fieldset legend="Company" disabled={readOnly}>
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <TextInput
                label="CAGE code"
                description="5 letters or digits (no I or O)"
                required
                value={values.cageCode}
                onChange={(e) => set('cageCode', e.currentTarget.value)}
                error={err('body.cageCode')}
                maxLength={5}
                autoCapitalize="characters"
              />
              <TextInput
                label="Further CAGE codes in scope"
                description="Comma-separated (HLO and children)"
                value={values.additionalCageCodes}
                onChange={(e) => set('additionalCageCodes', e.currentTarget.value)}
                error={err('body.additionalCageCodes')}
              />
              <TextInput
                label="Company name"
                required
                value={values.companyName}
                onChange={(e) => set('companyName', e.currentTarget.value)}
                error={err('body.companyName')}
              />
              <TextInput
                label="UEI"
                description="12 letters or digits (optional)"
                value={values.uei}
                onChange={(e) => set('uei', e.currentTarget.value)}
                error={err('body.uei')}
                maxLength={12}
              />
              <TextInput
                label="Address"
                value={values.companyAddress}
                onChange={(e) => set('companyAddress', e.currentTarget.value)}
                error={err('body.companyAddress')}
              />
              <TextInput
                label="Phone"
                value={values.companyPhone}
                onChange={(e) => set('companyPhone', e.currentTarget.value)}
                error={err('body.companyPhone')}
              />
              <TextInput
                label="Website"
                placeholder="https://"
                value={values.companyWebsite}
                onChange={(e) => set('companyWebsite', e.currentTarget.value)}
                error={err('body.companyWebsite')}
              />
            </SimpleGrid>
            <Textarea
              mt="sm"
              label="Assessment scope"
              description="The systems, locations and people that handle FCI, as you will describe them in SPRS."
              autosize
              minRows={2}
              value={values.scopeDescription}
              onChange={(e) => set('scopeDescription', e.currentTarget.value)}
              error={err('body.scopeDescription')}
            />
            <TextInput
              mt="sm"
              label="Computers that handle FCI"
              description="Every desktop and laptop in scope. Device requirements are met only when each of them sends a passing device check (or, if it cannot run the script, an owner or admin attests it)."
              inputMode="numeric"
              required
              w={{ base: '100%', sm: 320 }}
              value={values.deviceCount}
              onChange={(e) => set('deviceCount', e.currentTarget.value)}
              error={err('body.deviceCount')}
            />
          </Fieldset>

          <Fieldset legend="Mail platform" disabled={readOnly}>
            <Radio.Group
              value={values.mailPlatform}
              onChange={(v) => set('mailPlatform', v as Values['mailPlatform'])}
              error={err('body.mailPlatform')}
              label="Where your company e-mail and files live"
              required
            >
              <Group mt="xs">
                <Radio value="m365" label="Microsoft 365" />
                <Radio value="google" label="Google Workspace" />
              </Group>
            </Radio.Group>
          </Fieldset>

          <Fieldset legend="People who bid or handle FCI" disabled={readOnly}>
            <Stack gap="sm">
              {err('body.biddingUsers') && !values.biddingUsers.length && (
                <Text c="red" size="sm" role="alert">
                  {err('body.biddingUsers')}
                </Text>
              )}
              {values.biddingUsers.map((u, i) => (
                <Group key={i} align="flex-start" wrap="wrap" gap="sm">
                  <TextInput
                    label={`Person ${i + 1} name`}
                    required
                    value={u.name}
                    onChange={(e) => setUser(i, 'name', e.currentTarget.value)}
                    error={err(`body.biddingUsers.${i}.name`)}
                    style={{ flex: '1 1 12rem' }}
                  />
                  <TextInput
                    label={`Person ${i + 1} e-mail`}
                    required
                    type="email"
                    value={u.email}
                    onChange={(e) => setUser(i, 'email', e.currentTarget.value)}
                    error={err(`body.biddingUsers.${i}.email`)}
                    style={{ flex: '1 1 14rem' }}
                  />
                  <TextInput
                    label={`Person ${i + 1} role`}
                    value={u.role}
                    onChange={(e) => setUser(i, 'role', e.currentTarget.value)}
                    style={{ flex: '1 1 8rem' }}
                  />
                  {!readOnly && values.biddingUsers.length > 1 && (
                    <Button
                      variant="subtle"
                      color="red"
                      mt={24}
                      onClick={() =>
                        set(
                          'biddingUsers',
                          values.biddingUsers.filter((_, j) => j !== i),
                        )
                      }
                      aria-label={`Remove person ${i + 1}`}
                    >
                      Remove
                    </Button>
                  )}
                </Group>
              ))}
              {!readOnly && values.biddingUsers.length < 100 && (
                <Group>
                  <Button
                    variant="default"
                    size="xs"
                    onClick={() => set('biddingUsers', [...values.biddingUsers, { name: '', email: '', role: '' }])}
                  >
                    Add person
                  </Button>
                </Group>
              )}
            </Stack>
          </Fieldset>

          <Fieldset legend="Affirming Official" disabled={readOnly}>
            <Text size="sm" c="dimmed" mb="xs">
              The senior person who affirms compliance in SPRS each year.
            </Text>
            <SimpleGrid cols={{ base: 1, sm: 3 }}>
              <TextInput
                label="Official's name"
                required
                value={values.officialName}
                onChange={(e) => set('officialName', e.currentTarget.value)}
                error={err('body.affirmingOfficial.name')}
              />
              <TextInput
                label="Official's title"
                required
                value={values.officialTitle}
                onChange={(e) => set('officialTitle', e.currentTarget.value)}
                error={err('body.affirmingOfficial.title')}
              />
              <TextInput
                label="Official's e-mail"
                description="The e-mail this person signs in to Rampart with: only they approve policies and confirm the SPRS entry."
                required
                type="email"
                value={values.officialEmail}
                onChange={(e) => set('officialEmail', e.currentTarget.value)}
                error={err('body.affirmingOfficial.email')}
              />
            </SimpleGrid>
          </Fieldset>

          {!readOnly && (
            <Group justify="flex-end">
              <Button type="submit" loading={save.isPending}>
                Save scope
              </Button>
            </Group>
          )}
        </Stack>
      </form>
    </Paper>
  );
}
