// The device-check explainer, for the CMMC page's Device check tab: explains the latest run per
// computer (plus optional pasted script output and notes) with prioritized fixes and re-check
// steps, streamed, with a Stop button. Nothing is stored. Without a language model the offline
// analysis answers (labelled "offline analysis").
//
// <DeviceCheckExplainer tenantId hostnames? headingLevel? />
//   tenantId      the current tenant (required)
//   hostnames     only these computers' latest runs (e.g. the row's computer); default all
//   headingLevel  2, 3 or 4 for the answer's heading (default 3)
// API: POST /api/v1/tenants/:tenantId/llm/device-check/explain (docs/llm.md).
import { Button, Group, Stack } from '@mantine/core';
import { LimitedTextarea } from '../../components/LimitedTextarea.tsx';
import { useState, type FormEvent } from 'react';
import { StreamedAnswer, useStreamedAnswer } from '../../components/StreamedAnswer.tsx';
import { explainDeviceCheck } from '../../lib/llm-api.ts';

export interface DeviceCheckExplainerProps {
  tenantId: string;
  hostnames?: string[];
  headingLevel?: 2 | 3 | 4;
}

const PASTED_MAX = 100_000;
const NOTES_MAX = 4_000;

export function DeviceCheckExplainer({ tenantId, hostnames, headingLevel = 3 }: DeviceCheckExplainerProps) {
  const [pastedOutput, setPastedOutput] = useState('');
  const [notes, setNotes] = useState('');
  const answer = useStreamedAnswer();
  const running = answer.status === 'waiting' || answer.status === 'streaming';
  const tooLong = pastedOutput.length > PASTED_MAX || notes.length > NOTES_MAX;

  const run = () =>
    answer.start((handlers, signal) =>
      explainDeviceCheck(
        tenantId,
        { pastedOutput, notes, ...(hostnames?.length ? { hostnames } : {}) },
        handlers,
        signal,
      ),
    );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!tooLong) run();
  };

  return (
    <Stack gap="md">
      <form onSubmit={submit} noValidate aria-label="Explain device-check results">
        <Stack gap="sm" maw={720}>
          <LimitedTextarea
            label="Script output (optional)"
            description="Paste what the device-check script printed, e.g. from a computer that could not send its results. Otherwise the latest run of each computer is explained."
            value={pastedOutput}
            onValueChange={setPastedOutput}
            max={PASTED_MAX}
            minRows={3}
            maxRows={12}
            disabled={running}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)' } }}
          />
          <LimitedTextarea
            label="Notes (optional)"
            description="Context that helps, e.g. the anti-virus you use or computers that are shared."
            value={notes}
            onValueChange={setNotes}
            max={NOTES_MAX}
            minRows={2}
            maxRows={6}
            disabled={running}
          />
          <Group>
            <Button type="submit" loading={answer.status === 'waiting'} disabled={running || tooLong}>
              Explain results
            </Button>
          </Group>
        </Stack>
      </form>
      <StreamedAnswer
        answer={answer}
        title="What the results mean and what to fix"
        headingLevel={headingLevel}
        onRetry={run}
      />
    </Stack>
  );
}
